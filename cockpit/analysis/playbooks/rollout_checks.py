"""Checks of the bad-release playbook (seed 000, 场景六)."""

from __future__ import annotations

from cockpit.analysis.playbooks import result as res
from cockpit.analysis.playbooks.common import pod_command_line, ratio
from cockpit.analysis.playbooks.data import PlaybookData
from cockpit.analysis.playbooks.result import CheckEvidence, ItemResult, L
from cockpit.analysis.rollout import explain_rollout_text

# Probe paths that answer before the model is loaded and warmed up (vllm#15313,
# gateway-api-inference-extension#550: "/health starts returning true very early").
EARLY_HEALTH_PATHS = ("/health", "/healthz", "/ping", "/")
# A finish_reason=length share or HTTP 400 share this many times its baseline is a jump.
JUMP = 2.0


def _versions(data: PlaybookData) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for p in data.pods:
        digest = next((cs.digest for cs in p.container_statuses if cs.digest), "")
        image = p.spec.containers[0].image if p.spec.containers else ""
        key = f"{image} {digest[:19]} | {pod_command_line(p)[:160]}"
        out.setdefault(key, []).append(p.meta.name)
    return out


def roll_diff(data: PlaybookData) -> ItemResult:
    """Image digest and engine args that differ between the service's pods."""
    if not data.has("kube"):
        return res.not_available("kube")
    versions = _versions(data)
    ev = [
        CheckEvidence(label=", ".join(sorted(pods))[:120], value=key, source="kube")
        for key, pods in versions.items()
    ]
    if len(versions) > 1:
        return res.problem("playbook.finding.roll.versions", ev, n=len(versions))
    return res.ok("playbook.finding.roll.one_version", ev)


def roll_readiness(data: PlaybookData) -> ItemResult:
    """Readiness that passes before load and warm-up (probe path; Ready while warming)."""
    if not data.has("kube"):
        return res.not_available("kube")
    ev: list[CheckEvidence] = []
    weak = []
    for p in data.pods:
        for c in p.spec.containers[:1]:
            probe = c.readiness_probe or {}
            path = ((probe.get("httpGet") or {}).get("path")) if isinstance(probe, dict) else None
            if not probe:
                weak.append(p.meta.name)
                ev.append(
                    CheckEvidence(
                        **L("pod", pod=p.meta.name), value="readinessProbe: -", source="kube"
                    )
                )
            elif path in EARLY_HEALTH_PATHS and not c.startup_probe:
                weak.append(p.meta.name)
                ev.append(
                    CheckEvidence(
                        label=p.meta.name, value=f"readiness {path}, no startupProbe", source="kube"
                    )
                )
    report = explain_rollout_text(data.all_logs()) if data.logs else None
    warming = report is not None and "readiness_before_model_ready" in report.causes
    if warming and report is not None:
        ev.append(CheckEvidence(**L("log"), value=report.warmup_line or "", source="logs"))
    if weak or warming:
        return res.problem("playbook.finding.roll.readiness_weak", ev, pods=", ".join(weak) or "-")
    return res.ok("playbook.finding.roll.readiness_ok", ev)


def roll_mixed_versions(data: PlaybookData) -> ItemResult:
    """Old and new replicas serving side by side."""
    if not data.has("kube"):
        return res.not_available("kube")
    ready = [
        p
        for p in data.pods
        if p.container_statuses and all(cs.ready for cs in p.container_statuses)
    ]
    digests = {
        next(
            (cs.digest for cs in p.container_statuses if cs.digest),
            p.spec.containers[0].image if p.spec.containers else "",
        )
        for p in ready
    }
    ev = [
        CheckEvidence(
            **L("versions_serving"),
            value=", ".join(sorted(d[:26] for d in digests)),
            source="kube",
        )
    ]
    if len(digests) > 1:
        return res.problem("playbook.finding.roll.mixed", ev, n=len(digests))
    return res.ok("playbook.finding.roll.not_mixed", ev)


def _pct(share: float | None) -> str:
    """A 0–1 share in percent, as every other ratio is shown (``4.0 %``)."""
    return "—" if share is None else f"{share * 100:.1f} %"


def roll_finish_reason(data: PlaybookData) -> ItemResult:
    """finish_reason=length share and HTTP 400 share, now vs before (metrics, logs)."""
    ev: list[CheckEvidence] = []
    jumps = []
    for name in ("finish_length_share", "http_400_share"):
        s = data.signal(name)
        if s is None:
            continue
        base = s.baseline.value if s.baseline else None
        which = "signal_baseline_quiet" if s.baseline_from == "quiet" else "signal_baseline"
        ev.append(
            CheckEvidence(
                **(
                    L(which, name=name, baseline=_pct(base))
                    if base is not None
                    else L("signal_no_baseline", name=name)
                ),
                value=_pct(s.now.value),
                source="metrics",
                query=s.query,
            )
        )
        r = ratio(s.now.value, base)
        if (r is not None and r >= JUMP) or (base == 0 and (s.now.value or 0) > 0.05):
            jumps.append(name)
    report = explain_rollout_text(data.all_logs()) if data.logs else None
    if report is not None:
        share = report.http_400_share
        ev.append(
            CheckEvidence(
                **L("log"),
                value=f"{report.cause}; 400 share {share}",
                value_key="playbook.ev.release_log",
                value_args={"what": report.cause, "share": "-" if share is None else f"{share:g}"},
                source="logs",
            )
        )
        if report.cause in (
            "eos_stop_token_mismatch",
            "chat_template_missing_or_unresolvable",
            "eos_immediate_stop",
        ):
            jumps.append(report.cause)
    if not ev:
        return (
            res.not_available("metrics")
            if not data.has("metrics")
            else res.still_open("playbook.finding.no_signal")
        )
    if jumps:
        return res.problem("playbook.finding.roll.finish_jump", ev, what=", ".join(jumps))
    compared = [n for n in ("finish_length_share", "http_400_share") if data.signal(n)]
    return res.ok("playbook.finding.roll.finish_same", ev, signals=", ".join(compared) or "logs")
