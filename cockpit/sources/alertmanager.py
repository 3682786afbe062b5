"""Alertmanager API v2 source (read-only): the alerts it holds and its silences.

The connection is the Prometheus source's (:class:`cockpit.sources.prometheus.PrometheusSource`):
the same authentication (bearer token or file, basic auth, URL userinfo), TLS, proxy,
custom headers kept to the configured origin, per-request timeout and answer-size limit
(``[alertmanager]``, :class:`cockpit.config.AlertmanagerSettings`), and the same
classification of failures, reported with ``source = "alertmanager"``.

Endpoints (Alertmanager ``api/v2/openapi.yaml``): ``GET /api/v2/alerts`` with
``active``, ``silenced``, ``inhibited`` and ``unprocessed`` all true (every alert it
holds, each with ``status.state`` ``active``/``suppressed``/``unprocessed`` and the ids
of the silences and alerts that suppress it), and ``GET /api/v2/silences``. Both answer
a bare JSON array, not Prometheus's ``{"status", "data"}`` envelope.
"""

from __future__ import annotations

from typing import Any

from cockpit.config import AlertmanagerSettings
from cockpit.sources.prometheus import PrometheusSource

SOURCE = "alertmanager"
"""The ``source`` field of every failure this module raises."""


class AlertmanagerSource(PrometheusSource):
    """Read-only client of Alertmanager's API v2.

    Args:
        settings: URL, authentication, TLS, timeout and answer-size limit.

    Every public coroutine raises :class:`SourceError` only.
    """

    name = SOURCE
    too_large_hint = "hint.alertmanager.too_large"

    def __init__(self, settings: AlertmanagerSettings) -> None:
        super().__init__(settings)

    async def alerts(self) -> list[dict[str, Any]]:
        """Every alert Alertmanager holds (firing, silenced, inhibited, unprocessed), as
        sent: ``labels``, ``annotations``, ``startsAt``, ``endsAt``, ``fingerprint``,
        ``generatorURL``, ``status`` {``state``, ``silencedBy``, ``inhibitedBy``}.

        Raises:
            SourceError: classified; ``bad_data`` when the answer is not a JSON array.
        """
        params = {"active": "true", "silenced": "true", "inhibited": "true", "unprocessed": "true"}
        return await self._array("/api/v2/alerts", params)

    async def silences(self) -> list[dict[str, Any]]:
        """Every silence (active, pending and expired): ``id``, ``status.state``,
        ``matchers``, ``createdBy``, ``comment``, ``startsAt``, ``endsAt``.

        Raises:
            SourceError: classified; ``bad_data`` when the answer is not a JSON array.
        """
        return await self._array("/api/v2/silences", {})

    async def ping(self) -> str:
        """One line saying what answered (``/api/v2/status``), for ``cockpit doctor``.

        Raises:
            SourceError: classified.
        """
        resp = await self._send("GET", "/api/v2/status", {})
        if not resp.is_success:
            raise self._http_error(resp.status, None, resp.text, "/api/v2/status", "")
        try:
            body = resp.json()
        except ValueError:
            raise self._bad_data("status is not JSON", status=resp.status) from None
        info = body.get("versionInfo") if isinstance(body, dict) else None
        version = info.get("version") if isinstance(info, dict) else None
        return f"Alertmanager {str(version)[:40]}" if version else "Alertmanager answers"

    async def _array(self, path: str, params: dict[str, str]) -> list[dict[str, Any]]:
        """GET ``path`` and return its JSON array's objects (other members are dropped)."""
        resp = await self._send("GET", path, params)
        if not resp.is_success:
            try:
                body = resp.json()
            except ValueError:
                body = None
            envelope = body if isinstance(body, dict) else None
            raise self._http_error(resp.status, envelope, resp.text, path, "")
        try:
            body = resp.json()
        except ValueError:
            raise self._bad_data(f"{path}: the answer is not JSON", status=resp.status) from None
        if not isinstance(body, list):
            raise self._bad_data(f"{path}: the answer is not a JSON array", status=resp.status)
        return [item for item in body if isinstance(item, dict)]
