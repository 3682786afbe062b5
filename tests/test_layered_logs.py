"""Layered logs against the local Kubernetes API server (cluster ``logs``): the pod-log
query parameters, the findings per layer on the incident timeline, the previous instance
read first, the request ID followed from the gateway into the serving pod, pinning a
finding, and the neutralised, redacted lines."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cockpit.analysis.layered_logs import analyse_access, analyse_serving, merge, system_layer
from cockpit.clock import Clock
from cockpit.collect.logs import finding_evidence, gather_logs, render_lines
from cockpit.config import LogsSettings, Settings
from cockpit.context import AppContext
from cockpit.incident import Incident, TimelineKind
from cockpit.session import IncidentSession
from cockpit.sources.base import Sources
from cockpit.sources.kubernetes import KubeSource
from cockpit.store import IncidentStore
from tests.backends.kube_api import KubeApiServer
from tests.fixtures.kube import layered_logs as fx
from tests.fixtures.kube.objects import T0

NOW = T0 + timedelta(minutes=30)


def make_ctx(kubeconfig: Path, tmp_path: Path, **logs: object) -> AppContext:
    inc = Incident(lang="en")
    inc.service.namespace = fx.NS
    inc.service.selector = "app=vllm"
    inc.times.start = T0
    session = IncidentSession(IncidentStore(tmp_path / "state"), inc)
    kube = KubeSource(kubeconfig=kubeconfig, context="logs", timeout_s=5)
    settings = Settings(logs=LogsSettings(**logs))  # type: ignore[arg-type]
    settings.service.namespace = fx.NS
    settings.service.selector = "app=vllm"
    ctx = AppContext(
        settings=settings,
        sources=Sources(kube=kube),
        clock=Clock(frozen_at=NOW),
        lang="en",
        session=session,
    )
    ctx.metrics.suspect = (fx.SUSPECT, "pod")
    return ctx


def test_pod_log_sends_window_limit_tail_previous_and_timestamps(
    kubeconfig: Path, kube_api: KubeApiServer
) -> None:
    src = KubeSource(kubeconfig=kubeconfig, context="logs", timeout_s=5)
    since = T0 - timedelta(minutes=10)

    async def go() -> tuple[object, object]:
        try:
            whole = await src.pod_log(
                fx.SUSPECT,
                fx.NS,
                "server",
                previous=True,
                tail_lines=100,
                timestamps=True,
                since_time=since,
            )
            cut = await src.pod_log(
                fx.SUSPECT,
                fx.NS,
                "server",
                previous=True,
                tail_lines=2,
                timestamps=True,
                since_time=since,
                limit_bytes=200,
            )
            return whole, cut
        finally:
            await src.close()

    whole, cut = asyncio.run(go())
    first = whole.text.splitlines()[0]
    # The line of T0-40 min is before sinceTime: not sent.
    assert first.startswith(fx.stamp(-8)[:19]), first
    assert len(whole.text.splitlines()) == 5 and not whole.truncated
    # tailLines then limitBytes, as the kubelet applies them.
    assert len(cut.text.encode()) == 200 and cut.truncated
    assert cut.text.startswith(fx.stamp(2)[:19])
    q = [r for r in kube_api.requests_for("logs") if r.path.endswith(f"{fx.SUSPECT}/log")][-1].query
    assert q["sinceTime"] == [since.strftime("%Y-%m-%dT%H:%M:%SZ")]
    assert q["limitBytes"] == ["200"] and q["tailLines"] == ["2"]
    assert q["previous"] == ["true"] and q["timestamps"] == ["true"]
    assert q["container"] == ["server"]


def test_findings_per_layer_on_the_incident_timeline(kubeconfig: Path, tmp_path: Path) -> None:
    ctx = make_ctx(kubeconfig, tmp_path)
    report = asyncio.run(gather_logs(ctx))
    assert report.since == T0 - timedelta(minutes=10)
    assert report.scope_note == "suspect" and report.suspect == fx.SUSPECT
    reads = [(r.pod, r.role, r.previous) for r in report.reads]
    # The crash-looping suspect's previous instance is read first, then its current one.
    assert reads == [
        (fx.GATEWAY, "gateway", False),
        (fx.SUSPECT, "suspect", True),
        (fx.SUSPECT, "suspect", False),
        (fx.COHORT[0], "cohort", False),
        (fx.COHORT[1], "cohort", False),
    ]
    layers = {lay.layer: lay for lay in report.layers}
    assert list(layers) == ["access", "service", "runtime", "system"]

    access = layers["access"]
    assert access.access is not None
    assert access.access.requests == 5  # the request of T0-40 min is outside the window
    assert access.access.status == {"2xx": 2, "5xx": 2, "499": 1}
    assert access.access.upstreams == {"llm-vllm-8000": 5}
    assert access.access.slowest_s == 60.0
    (errs,) = access.findings
    assert errs.kind == "access_errors" and errs.count == 3
    assert errs.fields["by_status"] == {"503": 1, "504": 1, "499": 1}
    assert errs.first_at == T0 + timedelta(minutes=2.05) - timedelta(microseconds=0)
    assert errs.offset_s == 123.0

    service = layers["service"]
    kv = [f for f in service.findings if f.cause == "kv_cache_saturation"]
    assert kv[0].pods == [fx.SUSPECT] and kv[0].count == 3
    # The cohort's stats lines say the opposite: no queue on the healthy replicas.
    healthy = next(f for f in service.findings if f.cause == "no_server_queue")
    assert sorted(healthy.pods) == sorted(fx.COHORT)
    assert kv[0].fields["waiting_max"] == 85
    assert kv[0].first_at == T0 - timedelta(minutes=8) and kv[0].offset_s == -480.0

    runtime = layers["runtime"]
    kinds = [(f.kind, f.offset_s) for f in runtime.findings]
    assert kinds == [("cuda_oom", 126.0), ("nccl", 1203.0)]
    oom = runtime.findings[0]
    assert oom.lines[0].previous and "CUDA out of memory" in oom.lines[0].text
    assert runtime.first_error is not None and runtime.first_error.at == oom.first_at
    assert runtime.error_lines == 2
    assert layers["system"].not_read == "unreadable"


def test_request_id_followed_from_gateway_into_serving_pod(
    kubeconfig: Path, tmp_path: Path
) -> None:
    report = asyncio.run(gather_logs(make_ctx(kubeconfig, tmp_path)))
    ids = report.request_ids
    assert ids.status == "followed" and ids.access_ids == 5
    (tr,) = ids.followed
    assert tr.request_id == fx.RID_FOLLOWED and tr.status == 503
    assert tr.access.pod == fx.GATEWAY
    (hop,) = tr.serving
    assert hop.pod == fx.SUSPECT and hop.previous
    assert f"chatcmpl-{fx.RID_FOLLOWED}" in hop.text
    text = "\n".join(render_lines(report, "en"))
    assert "requests followed from the gateway into the serving pods" in text


def test_request_id_not_in_serving_logs_is_said() -> None:
    gw = analyse_access("gw", "c", False, fx.GATEWAY_LOG)
    sv = analyse_serving("p", "c", False, fx.COHORT_LOG, gw.access_ids)
    layers, ids = merge([("gateway", gw), ("serving", sv)], T0, system_layer(None, None))
    assert ids.status == "not_in_serving" and not ids.followed
    no_ids = analyse_access("gw", "c", False, fx.GATEWAY_LOG.replace(fx.RID_FOLLOWED, "-"))
    assert fx.RID_FOLLOWED not in no_ids.access_ids
    _, none = merge([("serving", sv)], T0, system_layer(None, None))
    assert none.status == "no_access"
    assert layers[3].not_read == "elsewhere_both"


def test_finding_pinned_lands_on_the_timeline(kubeconfig: Path, tmp_path: Path) -> None:
    ctx = make_ctx(kubeconfig, tmp_path)
    report = asyncio.run(gather_logs(ctx))
    oom = next(f for lay in report.layers for f in lay.findings if f.kind == "cuda_oom")
    ev = finding_evidence(oom, report, "E")
    assert ctx.session is not None
    ctx.session.pin(ev)
    pinned = ctx.session.incident.evidence[-1]
    assert pinned.at == T0 + timedelta(minutes=2.1) - timedelta(microseconds=0)
    assert pinned.source == "logs" and pinned.step == "E" and pinned.value == "1"
    assert pinned.query == (
        f"kubectl logs -n llm {fx.SUSPECT} -c server --previous --timestamps "
        f"--since-time={(T0 - timedelta(minutes=10)).strftime('%Y-%m-%dT%H:%M:%SZ')}"
    )
    assert "CUDA out of memory" in pinned.note
    assert pinned.label_i18n["zh"].startswith("运行时日志")
    assert "Runtime logs" in pinned.label_i18n["en"]
    entries = [e for e in ctx.session.incident.timeline if e.kind is TimelineKind.EVIDENCE]
    assert entries and entries[-1].at == pinned.at


def test_lines_are_neutralised_and_redacted(kubeconfig: Path, tmp_path: Path) -> None:
    report = asyncio.run(gather_logs(make_ctx(kubeconfig, tmp_path), layer="service"))
    assert [lay.layer for lay in report.layers] == ["service"]
    assert all(r.role != "gateway" for r in report.reads)
    text = "\n".join(render_lines(report, "en", max_lines=20))
    assert fx.SECRET not in text
    assert "\x1b" not in text and "\x07" not in text
    assert report.model_dump_json().count(fx.SECRET) == 0


def test_byte_limit_is_reported(kubeconfig: Path, tmp_path: Path) -> None:
    ctx = make_ctx(kubeconfig, tmp_path, max_mb=300 / 2**20)
    report = asyncio.run(gather_logs(ctx, layer="runtime"))
    cut = [r for r in report.reads if r.truncated]
    assert cut and all(r.bytes <= 300 for r in report.reads)
    assert "reached the read limit" in "\n".join(render_lines(report, "en"))


def test_no_gateway_said(kubeconfig: Path, tmp_path: Path) -> None:
    ctx = make_ctx(kubeconfig, tmp_path, gateway_namespace="kube-system")
    report = asyncio.run(gather_logs(ctx, layer="access"))
    (access,) = report.layers
    assert not access.read and access.not_read == "no_gateway"
    assert report.request_ids.status == "no_access"
    text = "\n".join(render_lines(report, "zh"))
    assert "kube-system" in text and "网关控制器" in text


def test_engine_sees_each_shape_s_first_and_last_lines_and_counts_all() -> None:
    from cockpit.analysis.layered_logs import SHAPE_KEEP, select_lines

    stats = [fx.stats(m / 10, 8, m, 50 + m / 10) for m in range(300)]
    noise = [
        f"{fx.stamp(1)} INFO 03-10 12:01:00 engine.py:267] Added request chatcmpl-{i:032x}.\n"
        for i in range(100)
    ] + [
        f'{fx.stamp(1)} INFO:     10.0.0.7:5312{i % 10} - "POST /v1/x HTTP/1.1" 200 OK\n'
        for i in range(100)
    ]
    err = f'{fx.stamp(2)} INFO:     10.0.0.7:53122 - "POST /v1/x HTTP/1.1" 500 Internal Server Error\n'
    lines = [ln.rstrip("\n") for ln in (*stats[:150], *noise, err, *stats[150:])]
    fed, shapes, counts, _ = select_lines(lines)
    assert len(fed) == 2 * SHAPE_KEEP + 1  # bookkeeping and 2xx answers left out
    assert fed[0] == lines[0] and fed[-1] == lines[-1] and err.rstrip("\n") in fed
    assert counts[shapes[0]] == 300
    part = analyse_serving("p", "c", False, "\n".join(lines))
    kv = next(f for f in part.findings if f.kind == "engine_log")
    assert kv.count == 300 and kv.fields["waiting_max"] == 299


@pytest.mark.parametrize(
    ("line", "bookkeeping"),
    [
        ("INFO engine.py:267] Added request chatcmpl-0af3.", True),
        ("INFO Finished request cmpl-1 \t ", True),
        ("a request b request c", True),
        ("a request b request c d", False),  # the last " request " is followed by more
        ("WARNING request queue is full", False),
        ('INFO:     10.0.0.7:53122 - "POST /v1/x HTTP/1.1" 200 OK', True),
        ('10.0.0.7 - "GET /x HTTP/1.1" 304 0', True),
        ('INFO:     10.0.0.7:53122 - "POST /v1/x HTTP/1.1" 500 Internal Server Error', False),
        ('"GET / HTTP/1.1"  200', False),  # the status must follow the first '" '
        (' HTTP/1.1" 500 then" 200', False),  # only the first '" ' counts
        ('x HTTP/1.1" 500 request abc', True),  # an added request, whatever the status
        ("GET / HTTP/1.1 200", False),
    ],
)
def test_bookkeeping_lines_are_left_out_of_the_engine(line: str, bookkeeping: bool) -> None:
    from cockpit.analysis.layered_logs import select_lines

    stamped = f"{fx.stamp(1)} {line}"
    fed, _, _, candidates = select_lines([stamped])
    assert (fed == [] and candidates == []) is bookkeeping


async def test_system_layer_reads_dcgm_xid_of_the_window(
    prometheus_scenario: Any, kubeconfig: Path, tmp_path: Path
) -> None:
    from tests.test_metric_history import ctx_for

    srv = prometheus_scenario("gpu_lost")
    ctx = ctx_for(srv, tmp_path, srv.scenario.scope["deployment"])
    ctx.sources.kube = KubeSource(kubeconfig=kubeconfig, context="logs", timeout_s=5)
    try:
        report = await gather_logs(ctx)
    finally:
        await ctx.sources.close()
    system = report.layers[-1]
    assert system.layer == "system" and system.read and not system.not_read
    xid = system.findings[0]
    assert xid.kind == "xid" and xid.category == "xid_hw"
    assert "Xid 79" in xid.lines[0].text and "gpu-node-b GPU 0" in xid.lines[0].text
    assert xid.first_at is not None and system.first_error == xid.lines[0]
    ev = finding_evidence(xid, report, "D")
    assert ev.query == "" and ev.at == xid.first_at and "系统日志" in ev.label_i18n["zh"]


def test_an_unmasked_serving_log_keeps_only_masked_lines() -> None:
    """A serving log read unmasked (the panel's reads): the error line, the finding's
    lines and the followed request's line the part keeps are masked, none is lost."""
    from cockpit.redact import MASK

    rid = "feedfacefeedfacefeedfacefeedface"
    secret = "hunter2-s3cr3t-value"
    text = (
        f"{fx.stamp(1)} ERROR {fx._vllm_time(1)} db.py:40] connect to "
        f"postgres://svc:{secret}@db:5432/x failed\n"
        f"{fx.stamp(2)} INFO {fx._vllm_time(2)} engine.py:267] Added request "
        f"chatcmpl-{rid} api_key={secret}\n"
        f"{fx.stamp(3)} {fx.NCCL} password={secret}\n"
    )
    part = analyse_serving("p", "c", False, text, [rid])
    assert secret not in part.model_dump_json()
    assert (
        MASK in part.first_error["service"].text and "db.py:40" in part.first_error["service"].text
    )
    (hop,) = part.serving_hits[rid]
    assert MASK in hop.text and rid in hop.text
    nccl = next(f for f in part.findings if f.kind == "nccl")
    assert nccl.lines and all(MASK in ln.text for ln in nccl.lines)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="0123456789abcdefABCDEFgxyzG.-_: #\t", max_size=60))
def test_line_shape_blanks_what_the_general_expression_blanks(text: str) -> None:
    from cockpit.analysis.layered_logs import _SHAPE, line_shape

    assert line_shape(text) == _SHAPE.sub("#", text)
    assert line_shape(text + "٣") == _SHAPE.sub("#", text + "٣")  # not ASCII: the general one


async def test_gpu_suspect_reads_the_pod_that_held_it(
    kube_api: KubeApiServer, prometheus_scenario: Any, tmp_path: Path
) -> None:
    """A GPU suspect (step D's throttled GPU, by UUID) is mapped to the pod that held it
    in the window (DCGM's ``pod`` label, from the history D and E read): that pod's log is
    read as the suspect's and its cohort next to it, the GPU named as the screens name it."""
    from cockpit.collect.logs import scope_text
    from cockpit.config import PrometheusSettings
    from cockpit.models import from_epoch
    from cockpit.sources.prometheus import PrometheusSource

    srv = prometheus_scenario("throttled_gpu")
    sc = srv.scenario
    s = sc.ground_truth.suspect
    world = sc.kube()
    cluster = kube_api.cluster("gpu-suspect")
    cluster.add(*world.objects)
    for (ns, pod, container, previous), text in world.logs.items():
        cluster.add_log(ns, pod, text, container=container, previous=previous)
    kc = kube_api.write_kubeconfig(
        tmp_path / "kc", ["gpu-suspect"], namespace=sc.scope["namespace"]
    )
    settings = Settings()
    settings.service.namespace = sc.scope["namespace"]
    settings.service.selector = sc.scope["selector"]
    ctx = AppContext(
        settings=settings,
        sources=Sources(
            metrics=PrometheusSource(PrometheusSettings(url=srv.url)),
            kube=KubeSource(kubeconfig=kc, context="gpu-suspect", timeout_s=5),
        ),
        clock=Clock(frozen_at=from_epoch(sc.now)),
        lang="en",
    )
    ctx.metrics.suspect = (s.uuid, "gpu")
    try:
        report = await gather_logs(ctx, layer="service")
    finally:
        await ctx.sources.close()
    assert report.scope_note == "suspect_gpu_pod"
    assert [r.pod for r in report.reads if r.role == "suspect"] == [s.pod]
    cohort = [r.pod for r in report.reads if r.role == "cohort"]
    assert cohort and s.pod not in cohort
    assert s.node in report.suspect and f"GPU {s.gpu_index}" in report.suspect
    assert "held it in the window" in scope_text(report, "en") and s.node in scope_text(
        report, "zh"
    )
