"""Imported for its effect: stable-worldmodel's environments, solvers and policies
(:func:`.base.import_swm`, without swm's dataset formats and their lancedb thread, so the
process that imports this module may be forked).

Build jobs that simulate name this module in their pool's ``preload``
(:func:`jepa_geometry.jobs.pool_context`): their server imports it once, instead of every job
process doing so.
"""

from .base import import_swm

stable_worldmodel = import_swm()
