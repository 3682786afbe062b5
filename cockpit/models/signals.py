"""The canonical signals: what each ``<layer>.<name>`` id means, independent of the stack.

Every metric profile (:mod:`cockpit.analysis.profiles`) maps some of these ids to its own
metric names; messages (:mod:`cockpit.models.messages`) render their human names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Layer = Literal["access", "serving", "runtime", "hardware", "infrastructure"]
Golden = Literal["latency", "traffic", "errors", "saturation"]
Direction = Literal["up", "down", "both"]

LAYERS: tuple[Layer, ...] = ("access", "serving", "runtime", "hardware", "infrastructure")
"""The five layers of seed 003 §一 (接入层 / 服务层 / 运行时层 / 硬件层 / 基础设施层)."""


@dataclass(frozen=True)
class SignalInfo:
    """What a canonical signal means, independent of the stack.

    Attributes:
        layer: One of :data:`LAYERS`.
        golden: Golden signal (seed 003 §二: latency, traffic, errors, saturation).
        en: English name.
        zh: Chinese name.
        bad: Which direction is bad: ``up``, ``down`` or ``both``.
    """

    layer: Layer
    golden: Golden
    en: str
    zh: str
    bad: Direction = "up"


SIGNALS: dict[str, SignalInfo] = {
    "access.latency": SignalInfo("access", "latency", "gateway latency", "网关延迟"),
    "access.upstream_latency": SignalInfo(
        "access", "latency", "gateway upstream latency", "网关上游延迟"
    ),
    "access.qps": SignalInfo("access", "traffic", "gateway QPS", "网关 QPS", "both"),
    "access.error_ratio_5xx": SignalInfo("access", "errors", "gateway 5xx ratio", "网关 5xx 比例"),
    "access.error_ratio_4xx": SignalInfo("access", "errors", "gateway 4xx ratio", "网关 4xx 比例"),
    "access.timeouts": SignalInfo("access", "errors", "gateway timeouts", "网关超时"),
    "serving.e2e_latency": SignalInfo("serving", "latency", "end-to-end latency", "端到端延迟"),
    "serving.ttft": SignalInfo("serving", "latency", "TTFT", "TTFT（首 token 时间）"),
    "serving.tpot": SignalInfo("serving", "latency", "TPOT / ITL", "TPOT（每输出 token 时间）"),
    "serving.queue_time": SignalInfo("serving", "latency", "queue time", "排队时间"),
    "serving.qps": SignalInfo("serving", "traffic", "QPS", "QPS", "both"),
    "serving.prompt_tps": SignalInfo(
        "serving", "traffic", "prompt tokens/s", "输入 tokens/s", "both"
    ),
    "serving.gen_tps": SignalInfo("serving", "traffic", "output tokens/s", "输出 tokens/s", "both"),
    # The engine's own failures over the requests it finished (vLLM finished_reason
    # error|abort, TGI/Triton failures): never the gateway's 5xx ratio, named apart.
    "serving.error_ratio": SignalInfo("serving", "errors", "engine error ratio", "引擎错误率"),
    # Requests their client gave up on (disconnects, cancels): a symptom of waiting, never
    # counted as the servers' error ratio (SGLang num_aborted_requests_total).
    "serving.client_aborts": SignalInfo("serving", "errors", "client aborts", "客户端中止"),
    # Failures the engine never sees (vLLM's API server: request_failure_total and the
    # instrumentator's http_requests_total{status}).
    "serving.rejected_ratio": SignalInfo(
        "serving", "errors", "failed before the engine", "引擎之前失败的请求"
    ),
    "serving.api_error_ratio": SignalInfo(
        "serving", "errors", "API server 5xx ratio", "API 服务 5xx 比例"
    ),
    # Requests whose generation stopped at the length limit (max_tokens or the context),
    # not at an end-of-sequence token: vLLM's finished_reason="length" share. Not a
    # failure; a release that breaks end-of-sequence handling moves most requests here.
    "serving.length_stops": SignalInfo(
        "serving", "traffic", "stopped at the length limit", "因长度上限停止的请求"
    ),
    "serving.queue": SignalInfo("serving", "saturation", "queue length", "队列长度"),
    "serving.running": SignalInfo(
        "serving", "saturation", "running requests", "运行中请求", "both"
    ),
    "serving.batch_size": SignalInfo("serving", "saturation", "batch size", "批大小", "down"),
    "serving.prompt_len": SignalInfo("serving", "traffic", "prompt length", "输入长度", "both"),
    "serving.output_len": SignalInfo("serving", "traffic", "output length", "输出长度", "both"),
    "serving.max_tokens": SignalInfo(
        "serving", "traffic", "requested max tokens", "请求的 max_tokens", "both"
    ),
    "runtime.kv_cache": SignalInfo("runtime", "saturation", "KV-cache usage", "KV 缓存使用率"),
    "runtime.preemptions": SignalInfo("runtime", "saturation", "preemptions", "抢占"),
    "runtime.fragmentation": SignalInfo(
        "runtime", "saturation", "GPU memory fragmentation", "显存碎片率"
    ),
    "hardware.gpu_util": SignalInfo("hardware", "saturation", "GPU util", "GPU 利用率"),
    "hardware.sm_active": SignalInfo("hardware", "saturation", "SM active", "SM 活跃度"),
    "hardware.fb_used": SignalInfo("hardware", "saturation", "memory used", "显存已用"),
    "hardware.fb_reserved": SignalInfo("hardware", "saturation", "memory reserved", "显存保留"),
    "hardware.power": SignalInfo("hardware", "saturation", "power", "功耗"),
    "hardware.temp": SignalInfo("hardware", "saturation", "temperature", "温度"),
    "hardware.sm_clock": SignalInfo("hardware", "saturation", "SM clock", "SM 时钟", "down"),
    "hardware.throttle": SignalInfo("hardware", "errors", "HW/thermal throttling", "硬件/温度降频"),
    "hardware.thermal_violation": SignalInfo(
        "hardware", "saturation", "thermal-throttled time", "温度降频时间"
    ),
    "hardware.xid": SignalInfo("hardware", "errors", "Xid changes", "Xid 变化"),
    "infra.restarts": SignalInfo(
        "infrastructure", "errors", "container restarts per 5 min", "每 5 分钟容器重启"
    ),
    "infra.oomkilled": SignalInfo(
        "infrastructure", "errors", "OOMKilled (host)", "OOMKilled（主机）"
    ),
    "infra.not_ready": SignalInfo("infrastructure", "errors", "pods not ready", "未就绪 Pod"),
    "infra.node_cpu": SignalInfo("infrastructure", "saturation", "node CPU busy", "节点 CPU 忙"),
    "infra.mem_pressure": SignalInfo(
        "infrastructure", "saturation", "memory pressure (PSI)", "内存压力（PSI）"
    ),
    "infra.net_errors": SignalInfo("infrastructure", "errors", "network errors", "网络错误"),
    "infra.cpu_throttle": SignalInfo(
        "infrastructure", "saturation", "container CPU throttling", "容器 CPU 限流"
    ),
}
"""Canonical signals: every profile maps some of these ids to its own metric names."""
