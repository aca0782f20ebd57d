"""The built-in strategies, one module per family, and the router that picks among them.

Importing this package registers every strategy by name (see :func:`chunklab.get_strategy`).
"""
from . import code, container, geometric, hierarchy, linguistic, semantic, structure  # noqa: F401
from . import router  # noqa: F401  (registers "auto"; it routes to the strategies above)
