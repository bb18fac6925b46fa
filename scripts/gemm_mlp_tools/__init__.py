"""Modules shared by the scripts in scripts/*/ (not entry points themselves)."""
