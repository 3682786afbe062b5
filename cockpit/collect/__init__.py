"""Collectors: run a screen's queries against the metrics source, concurrently and bounded,
and hand pure models to :mod:`cockpit.analysis`. No Textual here."""
