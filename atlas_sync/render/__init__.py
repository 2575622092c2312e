"""Profiles (typedef bundle + Jinja templates + naming) and rendering a LineageGraph into desired entities."""

from atlas_sync.render.profile import Profile, load_profile
from atlas_sync.render.renderer import DesiredEntity, DesiredState, render

__all__ = ["DesiredEntity", "DesiredState", "Profile", "load_profile", "render"]
