"""What a playbook runs on, from the words the user typed (pure).

The same text is read by the playbook screen's scope field and by ``cockpit playbook``:
pod names (two or more, separated by commas or spaces) or one job name, and the model's
shape as ``key=value`` tokens (``params=70 layers=80 kv_heads=8 head_dim=128``).
"""

from __future__ import annotations

import re

from cockpit.analysis.playbooks.data import ModelConfig

MODEL_KEYS = {
    "params": "params_b",
    "layers": "num_layers",
    "kv_heads": "num_kv_heads",
    "head_dim": "head_dim",
    "dtype_bytes": "dtype_bytes",
    "kv_dtype_bytes": "kv_dtype_bytes",
}
"""The words of the model's shape and the :class:`ModelConfig` field each sets."""


def parse_scope(scope: str) -> tuple[list[str] | None, str | None]:
    """``"w-0, w-1"`` → pods ``["w-0", "w-1"]``; ``"train-llama"`` → job; ``""`` → neither.

    ``key=value`` tokens (the model's shape, see :func:`parse_model`) are skipped.
    """
    tokens = [x for x in re.split(r"[,\s]+", scope.strip()) if x and "=" not in x]
    if len(tokens) >= 2:
        return tokens, None
    return None, (tokens[0] if tokens else None)


def parse_model(scope: str) -> ModelConfig | None:
    """The model's shape from ``params=70 layers=80 kv_heads=8 head_dim=128`` tokens
    (``dtype_bytes``/``kv_dtype_bytes`` default to 2), ``None`` when none is given."""
    values: dict[str, float] = {}
    for key, raw in re.findall(r"([a-z_]+)=([0-9.]+)", scope):
        field = MODEL_KEYS.get(key)
        if field is not None:
            try:
                values[field] = float(raw)
            except ValueError:
                continue
    if not values:
        return None
    ints = {"num_layers", "num_kv_heads", "head_dim"}
    return ModelConfig(**{k: (int(v) if k in ints else v) for k, v in values.items()})


def unknown_model_keys(scope: str) -> list[str]:
    """``key=value`` tokens whose key is not a word of the model's shape (typos such as
    ``layer=80``), so that they can be named instead of silently ignored."""
    return [k for k in re.findall(r"([^\s,=]+)=", scope) if k not in MODEL_KEYS]
