"""Tools built on the library: the pre-launch audit, the benchmarks and index versioning.

- :mod:`chunklab.tools.audit` — article 000's self-check list, each item measured (``python -m chunklab audit``)
- :mod:`chunklab.tools.bench` — benchmarks that run a reference beside chunklab (``python -m chunklab bench``)
- :mod:`chunklab.tools.scale` — time and peak memory of one evaluation on synthetic corpora of growing size (``bench scale``)
- :mod:`chunklab.tools.versioning` — index versions, manifests and incremental re-chunking
"""
