"""Built-in strategies, one module per family. Importing this package registers them."""
from . import code, container, geometric, hierarchy, linguistic, semantic, structure  # noqa: F401
