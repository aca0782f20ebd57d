"""Only the compiled part of the build; everything else is in pyproject.toml.

chunklab._topk (chunklab/_topk.c) ranks BM25 scores without materialising them. It is optional:
if it cannot be compiled, the install goes on and chunklab uses its numpy/scipy path, which gives
the same rankings (tests/test_retrieval.py), only slower.
"""
from setuptools import Extension, setup

setup(ext_modules=[Extension("chunklab._topk", sources=["chunklab/_topk.c"], optional=True,
                             extra_compile_args=["-O3"])])
