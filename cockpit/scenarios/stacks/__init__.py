"""Per-stack emitters: each module knows one exporter's metric names and labels
(``shared/reference/metric_catalog.json``) and turns topology plus signals into series.

To add a stack (SGLang, TGI, Triton, …), write a module here with a signals dataclass and
an ``emit(ms, …)`` function; scenarios pick the emitters they need.
"""
