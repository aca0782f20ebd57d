"""Built-in strategies, one module per family. Importing this package registers them."""
from . import geometric, linguistic  # noqa: F401
