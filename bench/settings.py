"""The benchmark server's settings: the product's, serving the floor endpoints too (bench.urls).

Used by the production-shape benchmarks, which run gunicorn in processes of their own.
"""

from loopweb.settings import *  # noqa: F403

ROOT_URLCONF = "bench.urls"
