"""Serving-engine launch arguments found in pasted text (pure, no I/O).

Reads the flags of ``vllm serve`` / ``python -m vllm.entrypoints.openai.api_server``,
``text-generation-launcher`` (TGI) and ``python -m sglang.launch_server``, and the config
dump vLLM prints at start (``Initializing an LLM engine with config: ...
max_seq_len=4096, ... tensor_parallel_size=1``). Flag names are the engines' own CLI
names (vLLM ``EngineArgs``, TGI launcher, SGLang ``ServerArgs``); ``-tp`` is vLLM's alias.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from cockpit.analysis.logtext import has_keyword, to_float, to_int

_LAUNCH = re.compile(
    r"vllm serve|vllm\.entrypoints|text-generation-launcher|sglang\.launch_server|"
    r"--tensor-parallel-size|--tp-size|--num-shard|--gpu-memory-utilization|"
    r"Initializing an? (?:LLM|V1 LLM)? ?engine|text_generation_launcher: Args \{|"
    r"non-default args: \{",
    re.IGNORECASE,
)

# flag spelling (as typed, dashes or underscores) → field
_FLAGS: dict[str, str] = {
    "tensor-parallel-size": "tensor_parallel_size",
    "tp": "tensor_parallel_size",
    "tp-size": "tensor_parallel_size",
    "num-shard": "tensor_parallel_size",
    "pipeline-parallel-size": "pipeline_parallel_size",
    "gpu-memory-utilization": "gpu_memory_utilization",
    "mem-fraction-static": "mem_fraction_static",
    "max-model-len": "max_model_len",
    "context-length": "max_model_len",
    "max-total-tokens": "max_model_len",
    "max-num-seqs": "max_num_seqs",
    "max-running-requests": "max_num_seqs",
    "max-concurrent-requests": "max_concurrent_requests",
    "max-num-batched-tokens": "max_num_batched_tokens",
    "max-batch-prefill-tokens": "max_batch_prefill_tokens",
    "chunked-prefill-size": "max_num_batched_tokens",
    "max-input-length": "max_input_tokens",
    "max-input-tokens": "max_input_tokens",
    "kv-cache-dtype": "kv_cache_dtype",
    "quantization": "quantization",
    "quantize": "quantization",
    "dtype": "dtype",
    "model": "model",
    "model-id": "model",
    "model-path": "model",
    "chat-template": "chat_template",
}
_FLAG_RE = re.compile(r"(?:^|\s)--?([A-Za-z][A-Za-z0-9_-]*)(?:(?:=| +)((?!-)[^\s\\]+))?")
_CONFIG_DUMP = re.compile(
    r"\b(max_seq_len|tensor_parallel_size|dtype|quantization|model)=([^,)\s]+)"
)
# TGI's launcher prints its arguments as a Rust struct (``Args { model_id: "…",
# num_shard: Some(2), max_concurrent_requests: 128, … }``); vLLM ≥ 0.8 prints
# ``non-default args: {'model': '…', 'gpu_memory_utilization': 0.98}``.
_STRUCT_FIELD = re.compile(r"['\"]?\b([a-z_]+)['\"]?\s*:\s*(?:Some\()?['\"]?([^,'\"()\s}]+)")
_STRUCT_KEYS = {
    "model_id": "model",
    "model": "model",
    "num_shard": "tensor_parallel_size",
    "tensor_parallel_size": "tensor_parallel_size",
    "quantize": "quantization",
    "quantization": "quantization",
    "dtype": "dtype",
    "max_concurrent_requests": "max_concurrent_requests",
    "max_input_length": "max_input_tokens",
    "max_input_tokens": "max_input_tokens",
    "max_total_tokens": "max_model_len",
    "max_model_len": "max_model_len",
    "max_batch_prefill_tokens": "max_batch_prefill_tokens",
    "max_num_seqs": "max_num_seqs",
    "max_num_batched_tokens": "max_num_batched_tokens",
    "gpu_memory_utilization": "gpu_memory_utilization",
    "kv_cache_dtype": "kv_cache_dtype",
}
_PARAMS_B = re.compile(r"(?<![\d.])(\d{1,4}(?:\.\d)?)\s?[Bb](?![A-Za-z0-9])")

_INT_FIELDS = {
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "max_model_len",
    "max_num_seqs",
    "max_num_batched_tokens",
    "max_batch_prefill_tokens",
    "max_input_tokens",
    "max_concurrent_requests",
}
_FLOAT_FIELDS = {"gpu_memory_utilization", "mem_fraction_static"}


class EngineArgs(BaseModel):
    """Launch arguments seen in the text; ``None`` where the text does not say.

    Attributes:
        engine: ``vllm``, ``tgi`` or ``sglang`` when the launch line names it.
        model: Model path or id as given.
        model_params_b: Parameter count in billions read from the model name
            (``Meta-Llama-3-8B-Instruct`` → 8.0); ``None`` when the name carries none.
        tensor_parallel_size: ``--tensor-parallel-size`` / ``-tp`` / ``--tp-size`` /
            ``--num-shard``.
        gpu_memory_utilization: vLLM fraction of GPU memory it may use (0–1).
        mem_fraction_static: SGLang fraction for weights + KV pool (0–1).
        max_model_len: ``--max-model-len`` / ``--context-length`` / ``--max-total-tokens``
            or ``max_seq_len`` from vLLM's config dump, in tokens.
        max_num_seqs: Concurrency cap (``--max-num-seqs``, SGLang
            ``--max-running-requests``, TGI ``--max-concurrent-requests``).
        max_num_batched_tokens: Prefill token budget per step.
        max_batch_prefill_tokens: TGI prefill budget.
        max_input_tokens: TGI ``--max-input-length``/``--max-input-tokens``.
        max_concurrent_requests: TGI ``--max-concurrent-requests`` (admission limit; also
            folded into ``max_num_seqs`` when that is not given).
        kv_cache_dtype / quantization / dtype / chat_template: as given.
    """

    engine: str | None = None
    model: str | None = None
    model_params_b: float | None = None
    tensor_parallel_size: int | None = None
    pipeline_parallel_size: int | None = None
    gpu_memory_utilization: float | None = None
    mem_fraction_static: float | None = None
    max_model_len: int | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    max_batch_prefill_tokens: int | None = None
    max_input_tokens: int | None = None
    max_concurrent_requests: int | None = None
    kv_cache_dtype: str | None = None
    quantization: str | None = None
    dtype: str | None = None
    chat_template: str | None = None

    def empty(self) -> bool:
        """True when nothing was found."""
        return not any(v is not None for v in self.model_dump().values())


# Lower-case substrings every launch line contains one of (a cheap gate before _LAUNCH).
KEYWORDS = (
    "vllm",
    "text-generation",
    "text_generation",
    "sglang",
    "--",
    "engine",
    "-tp ",
    "non-default args",
)


def looks_like_launch(line: str) -> bool:
    """True when ``line`` may carry engine launch arguments."""
    return has_keyword(line, KEYWORDS) and bool(_LAUNCH.search(line))


def _engine_of(line: str) -> str | None:
    low = line.lower()
    if "vllm" in low or "llm engine" in low or "non-default args" in low:
        return "vllm"
    if "text-generation-launcher" in low or "text_generation_launcher" in low:
        return "tgi"
    if "sglang" in low:
        return "sglang"
    return None


def params_from_name(name: str) -> float | None:
    """``"/models/Qwen2.5-32B-Instruct-AWQ"`` → ``32.0``; ``None`` when no ``<n>B`` part."""
    base = name.rstrip("/").rsplit("/", 1)[-1]
    m = _PARAMS_B.search(base.replace("_", "-"))
    if m is None:
        return None
    value = to_float(m.group(1))
    return value if value and value > 0 else None


def update_engine_args(args: EngineArgs, line: str) -> None:
    """Fold the launch arguments found on ``line`` into ``args`` (later values win)."""
    if not looks_like_launch(line):
        return
    engine = _engine_of(line)
    if engine and args.engine is None:
        args.engine = engine
    found: dict[str, str] = {}
    for m in _CONFIG_DUMP.finditer(line):
        key = {"max_seq_len": "max_model_len"}.get(m.group(1), m.group(1))
        found[key] = m.group(2).strip("'\"")
    if "Args {" in line or "args: {" in line:
        for sm in _STRUCT_FIELD.finditer(line):
            field = _STRUCT_KEYS.get(sm.group(1))
            if field is not None:
                found[field] = sm.group(2)
    for m in _FLAG_RE.finditer(line):
        flag = m.group(1).lower().replace("_", "-")
        field = _FLAGS.get(flag)
        if field is None or m.group(2) is None:
            continue
        found[field] = m.group(2).strip("'\"")
    for field, raw in found.items():
        value: object
        if field in _INT_FIELDS:
            value = to_int(raw)
        elif field in _FLOAT_FIELDS:
            value = to_float(raw)
        else:
            value = raw if raw.lower() not in ("none", "null") else None
        if value is None:
            continue
        setattr(args, field, value)
    if args.max_concurrent_requests is not None and args.max_num_seqs is None:
        args.max_num_seqs = args.max_concurrent_requests
    if args.model is not None and args.model_params_b is None:
        args.model_params_b = params_from_name(args.model)
    if args.model_params_b is None:
        # a model named in the text but not as --model (e.g. "--model <name>" omitted)
        for token in line.split():
            if "/" in token and not token.startswith("-"):
                p = params_from_name(token)
                if p is not None:
                    args.model_params_b = p
                    args.model = args.model or token
                    break


def flags_for_engine(
    ids: list[str], engine: str | None, table: dict[str, dict[str | None, str]]
) -> list[str]:
    """Advice ids with flags only of the engine that printed the text: an id in ``table``
    becomes ``table[id][engine]`` (``None`` key: no serving engine) or is dropped when the
    engine has no such flag; other ids stay. Order kept, repeats dropped."""
    out: list[str] = []
    for i in ids:
        variants = table.get(i)
        picked = i if variants is None else variants.get(engine)
        if picked and picked not in out:
            out.append(picked)
    return out
