"""Backends behind protocols that return pydantic models, never client objects.

Live implementations wrap the real clients; :mod:`cockpit.sources.bundle` records any
source into an evidence bundle and replays it through the same protocols.
"""
