"""jepa-geometry: the library behind *Planning in the Right Geometry*.

One module per concept of the papers (see the README's module map). The names a reader of
the papers looks for are importable from the package root.
"""

from .artifacts import Artifact, ArtifactError, data_root, get_or_build, load
from .book import setup_chapter
from .profiles import PROFILES, Profile, ProfileError, load_profile

__all__ = [
    "PROFILES",
    "Artifact",
    "ArtifactError",
    "Profile",
    "ProfileError",
    "data_root",
    "get_or_build",
    "load",
    "load_profile",
    "setup_chapter",
]
__version__ = "0.1.0"
