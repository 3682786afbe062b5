"""Helpers the check modules share (pure)."""

from __future__ import annotations

from cockpit.analysis.engine_args import EngineArgs, update_engine_args
from cockpit.models.kube import PodLite

GPU_RESOURCE = "nvidia.com/gpu"


def pod_command_line(pod: PodLite) -> str:
    """The first container's command and args as one line (for the engine-args parser)."""
    if not pod.spec.containers:
        return ""
    c = pod.spec.containers[0]
    return " ".join([*c.command, *c.args])


def engine_args_of(pod: PodLite) -> EngineArgs:
    """Engine launch arguments of a pod (``vllm serve …`` etc. in command/args)."""
    args = EngineArgs()
    line = pod_command_line(pod)
    if line:
        update_engine_args(args, line)
        if args.engine is None and "--" in line:
            # An image whose entrypoint is the engine: args alone are flags.
            update_engine_args(args, "vllm serve " + line)
            args.engine = None
    return args


def restarts(pod: PodLite) -> int:
    """Total container restarts."""
    return sum(cs.restart_count for cs in pod.container_statuses)


def ratio(now: float | None, base: float | None) -> float | None:
    """``now / base`` (``None`` when either is unknown or the base is 0)."""
    if now is None or base is None or base == 0:
        return None
    return now / base
