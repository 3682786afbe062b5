"""Configuration: flags > environment (``COCKPIT_…``, nested with ``__``) > config file.

The file is ``~/.config/cockpit/config.toml`` (``platformdirs.user_config_dir("cockpit")``),
or the path in ``COCKPIT_CONFIG``. Example::

    lang = "en"
    [prometheus]
    url = "https://prometheus.example:9090"
    bearer_token_file = "/var/run/secrets/prom-token"
    [service]
    namespace = "llm"
    selector = "app=vllm"
    model = "qwen2.5-72b"

Environment examples: ``COCKPIT_PROMETHEUS__URL``, ``COCKPIT_SERVICE__NAMESPACE``,
``COCKPIT_LANG``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, SecretStr, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from cockpit.redact import split_userinfo


def config_path() -> Path:
    """Where the config file is read from (``COCKPIT_CONFIG`` overrides)."""
    env = os.environ.get("COCKPIT_CONFIG")
    if env:
        return Path(env)
    from platformdirs import user_config_dir

    return Path(user_config_dir("cockpit")) / "config.toml"


class PrometheusSettings(BaseModel):
    """How to reach the Prometheus-compatible query API."""

    url: str = ""
    """Base URL, e.g. ``http://prometheus.monitoring:9090`` (Thanos/Mimir/VictoriaMetrics work)."""
    bearer_token: SecretStr | None = None
    """Bearer token sent as ``Authorization: Bearer …``."""
    bearer_token_file: Path | None = None
    """File holding the bearer token (read at start-up; wins over ``bearer_token``)."""
    username: str = ""
    """Basic-auth user name."""
    password: SecretStr | None = None
    """Basic-auth password."""
    ca_file: Path | None = None
    """CA bundle to verify the server's TLS certificate."""
    insecure: bool = False
    """Skip TLS verification. Off by default; only for a lab."""
    timeout_s: float = Field(default=10.0, gt=0, le=300)
    """Per-query timeout in seconds."""
    max_concurrency: int = Field(default=256, ge=1, le=512)
    """The most queries in flight at once against this server. A screen asks ~30–70
    queries and ``cockpit analyze`` ~170 (steps C–F and the window's history, none waiting
    for another's answer); with a distant server each wave costs a round trip, so the
    ceiling lets every query of a screen or an analysis be in flight at once
    (bench_drilldown: 64 queries at +250 ms take 0.35 s at 64, 0.59 s at 32, 2.1 s at 8;
    bench_analyze: at 64, its 167 queries went in three waves). The server queues what it
    does not evaluate at once (Prometheus: ``--query.max-concurrency``, 20 by default), at
    no round trip's cost. The limit in force starts at this ceiling
    and adapts below it: it backs off when the answers' latency climbs (a Prometheus
    queueing them or short of CPU, :class:`cockpit.collect.runner.AdaptiveLimit`) and
    grows again while they come back at a steady latency. Lower it for a server that
    rate-limits (HTTP 429)."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra HTTP headers (``X-Scope-OrgID`` for Mimir, say)."""
    max_response_mb: float = Field(default=16.0, gt=0, le=4096)
    """Largest answer read, in MiB after decompression (a whole screen's answers are
    ~0.75 MiB, bench_drilldown; a wrong selector over a big cluster or a hostile server
    can send gigabytes). A larger one fails that query, naming it and this limit; the
    answers being read at once share four times this."""
    compression: bool = False
    """Ask for gzip-compressed answers. Off by default: next to the server (same cluster
    or region) compressing and decompressing a screen's ~0.75 MB of JSON costs more CPU
    time on both ends than the bytes it saves (bench_drilldown); turn it on across a thin
    link (a remote Thanos over VPN)."""

    @model_validator(mode="after")
    def _userinfo_is_basic_auth(self) -> PrometheusSettings:
        """A URL with userinfo (``https://user:pass@host``) becomes the bare URL plus basic
        auth (unless ``username`` is set, which wins): the URL is shown in hints, errors,
        F2's commands and bundles, and must never carry the password."""
        bare, user, password = split_userinfo(self.url)
        if bare != self.url:
            self.url = bare
            if not self.username and user:
                self.username = user
                self.password = SecretStr(password) if password else self.password
        return self


class AlertmanagerSettings(PrometheusSettings):
    """How to reach Alertmanager's API v2 (``/api/v2/alerts``, ``/api/v2/silences``):
    the same URL, authentication, TLS, proxy, timeout and answer-size options as
    :class:`PrometheusSettings`. Without ``url`` the alerts are read from Prometheus's
    ``ALERTS`` / ``ALERTS_FOR_STATE`` series instead. Example::

        [alertmanager]
        url = "https://alertmanager.monitoring.svc:9093"
        bearer_token_file = "/var/run/secrets/am-token"
    """


class ServiceSettings(BaseModel):
    """The service under investigation."""

    namespace: str = ""
    """Kubernetes namespace of the service."""
    selector: str = ""
    """Label selector of its pods, e.g. ``app=vllm``."""
    deployment: str = ""
    """Deployment or StatefulSet name."""
    model: str = ""
    """Served model name (``model_name`` label on vLLM metrics)."""
    slo_p99_ms: float | None = None
    """Latency SLO on P99, in milliseconds; when unset, the baseline P99 × 1.5 is used."""
    slo_error_ratio: float | None = None
    """Error-ratio SLO (0.01 = 1 %); when unset, the baseline ratio × 3 (at least 1 %)."""


class ProfileSettings(BaseModel):
    """Metric profiles (``cockpit/knowledge/profiles/*.toml``): override or extend detection.

    A user file has the same schema as a built-in profile; a file whose ``[profile] id``
    matches a built-in one overrides it signal by signal (same signal ``id``) and adds the
    signals it does not have; a new id adds a whole profile. Example::

        [profiles]
        extra_files = ["~/.config/cockpit/profiles/my-vllm-fork.toml"]
        force = ["vllm"]
        disable = ["triton"]
    """

    extra_files: list[Path] = Field(default_factory=list)
    """Extra profile files (TOML), merged over the built-in ones in order."""
    force: list[str] = Field(default_factory=list)
    """Profile ids to use even when detection does not find their metrics."""
    disable: list[str] = Field(default_factory=list)
    """Profile ids never to use (e.g. a stack whose metrics leak in from another team)."""


class KubernetesSettings(BaseModel):
    """How to reach the Kubernetes API (read-only)."""

    kubeconfig: Path | None = None
    """Kubeconfig file; default ``$KUBECONFIG`` or ``~/.kube/config``; in-cluster when absent."""
    context: str = ""
    """Kubeconfig context; default the current context."""
    timeout_s: float = Field(default=10.0, gt=0, le=300)
    """Per-request timeout in seconds."""
    max_response_mb: float = Field(default=64.0, gt=0, le=4096)
    """Largest answer read, in MiB (one page of 500 objects is a few MiB; a pod log is
    asked for its tail). A larger one fails that request, naming it and this limit."""


class LogsSettings(BaseModel):
    """How the layered logs are read (``[logs]``; ``cockpit logs`` and the logs panel)."""

    max_mb: float = Field(default=2.0, gt=0, le=64)
    """Largest part of one container's log read, in MiB (``limitBytes``); the report
    says when a log was cut there."""
    tail_lines: int = Field(default=50_000, ge=1, le=1_000_000)
    """At most that many lines per log (``tailLines``)."""
    timeout_s: float = Field(default=30.0, gt=0, le=300)
    """Time one log read may take, in seconds."""
    gateway_namespace: str = "ingress-nginx"
    """Namespace of the gateway's controller pods (the access logs)."""
    gateway_selector: str = "app.kubernetes.io/component=controller"
    """Label selector of the gateway's controller pods in that namespace."""
    cohort: int = Field(default=2, ge=0, le=20)
    """Pods of the suspect's cohort whose logs are read next to the suspect's."""


class Settings(BaseSettings):
    """Everything cockpit can be configured with."""

    model_config = SettingsConfigDict(
        env_prefix="COCKPIT_",
        env_nested_delimiter="__",
        extra="ignore",
    )

    lang: Literal["", "zh", "en"] = ""
    """UI language, ``zh`` or ``en``; default from the locale (``zh`` when it starts with zh)."""
    prometheus: PrometheusSettings = Field(default_factory=PrometheusSettings)
    """Prometheus-compatible metrics backend."""
    alertmanager: AlertmanagerSettings = Field(default_factory=AlertmanagerSettings)
    """Alertmanager (optional): where the alerts that paged are read from."""
    service: ServiceSettings = Field(default_factory=ServiceSettings)
    """The service under investigation."""
    kubernetes: KubernetesSettings = Field(default_factory=KubernetesSettings)
    """Kubernetes API access."""
    logs: LogsSettings = Field(default_factory=LogsSettings)
    """Layered logs (limits, the gateway's pods)."""
    state_dir: Path | None = None
    """Where incidents are kept; default the XDG state dir (``~/.local/state/cockpit``)."""
    profiles: ProfileSettings = Field(default_factory=ProfileSettings)
    """Metric profile overrides and extensions."""
    baseline: Literal["1d", "7d", "quiet"] = "1d"
    """Default baseline: ``1d``, ``7d`` or ``quiet`` (the quiet hours before the impact)."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (
            init_settings,
            env_settings,
            TomlConfigSettingsSource(settings_cls, toml_file=config_path()),
        )

    def resolved_lang(self) -> str:
        """The language to use: configured, else from the locale."""
        if self.lang in ("zh", "en"):
            return self.lang
        from cockpit.i18n import default_lang

        return default_lang()

    def resolved_state_dir(self) -> Path:
        """The incident directory (``COCKPIT_STATE_DIR`` or XDG state dir)."""
        if self.state_dir is not None:
            return self.state_dir
        from platformdirs import user_state_dir

        return Path(user_state_dir("cockpit"))


MAX_CONFIG_BYTES = 1 * 2**20
"""Largest configuration file read (a full one is a few KiB)."""
MAX_CONFIG_DEPTH = 8
"""Deepest nesting of tables and arrays read (cockpit's own settings nest 3 deep)."""
MAX_CONFIG_VALUE = 64 * 2**10
"""Longest key or string value read, in characters (a token file path, a PEM path)."""


class ConfigTooLarge(ValueError):
    """The configuration file is over one of the limits above; the message is one line
    that names the limit and never repeats the offending value."""


def read_config_file(path: Path) -> dict[str, Any]:
    """Parse the TOML file ``path`` within the limits (size, nesting, value length).

    Returns:
        The table; ``{}`` when the file does not exist.

    Raises:
        ConfigTooLarge: over a limit (also for nesting deeper than Python's parser can
            follow, instead of a ``RecursionError``).
        ValueError: not TOML (``tomllib.TOMLDecodeError``) or not UTF-8.
        OSError: it cannot be read.
    """
    import tomllib

    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return {}
    if size > MAX_CONFIG_BYTES:
        raise ConfigTooLarge(
            f"{path} is {size / 2**20:.1f} MiB; a configuration file is at most "
            f"{MAX_CONFIG_BYTES // 2**20} MiB"
        )
    with path.open("rb") as fh:
        raw = fh.read(MAX_CONFIG_BYTES + 1)
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except RecursionError:
        raise ConfigTooLarge(
            f"{path} nests tables or arrays too deep to read (at most {MAX_CONFIG_DEPTH})"
        ) from None
    _check_within_limits(path, data, "", 1)
    return data


def _check_within_limits(path: Path, value: Any, where: str, depth: int) -> None:
    if depth > MAX_CONFIG_DEPTH:
        raise ConfigTooLarge(f"{path}: {where[:80]} nests deeper than {MAX_CONFIG_DEPTH} levels")
    if isinstance(value, str) and len(value) > MAX_CONFIG_VALUE:
        raise ConfigTooLarge(
            f"{path}: {where[:80]} is {len(value)} characters long; a value is at most "
            f"{MAX_CONFIG_VALUE}"
        )
    if isinstance(value, dict):
        for key, item in value.items():
            if len(key) > MAX_CONFIG_VALUE:
                raise ConfigTooLarge(
                    f"{path}: a key {len(key)} characters long under {where or 'the top'}; "
                    f"a key is at most {MAX_CONFIG_VALUE}"
                )
            _check_within_limits(path, item, f"{where}.{key}" if where else key, depth + 1)
    elif isinstance(value, list):
        for n, item in enumerate(value):
            _check_within_limits(path, item, f"{where}[{n}]", depth + 1)


def unknown_keys(path: Path) -> list[str]:
    """Dotted keys of the TOML file ``path`` that no setting reads (``promethues.url``,
    ``prometheus.ulr``): they are ignored, so ``cockpit doctor`` names them. Tables whose
    keys are free (``prometheus.headers``, profile overrides) are not looked into.

    Returns:
        Sorted keys; empty when the file is absent or unreadable (loading reports that).
    """
    from pydantic import BaseModel

    try:
        data = read_config_file(path)
    except (OSError, ValueError):
        return []
    out: list[str] = []

    def walk(model: type[BaseModel], table: dict[str, Any], prefix: str) -> None:
        for key, value in table.items():
            field = model.model_fields.get(key)
            if field is None:
                out.append(prefix + key)
                continue
            sub = field.annotation
            if isinstance(value, dict) and isinstance(sub, type) and issubclass(sub, BaseModel):
                walk(sub, value, f"{prefix}{key}.")

    walk(Settings, data, "")
    return sorted(out)


def load_settings(**overrides: Any) -> Settings:
    """Build settings; ``overrides`` (from CLI flags) win over env and file.

    Raises:
        pydantic.ValidationError: on a malformed config file or value.
        ConfigTooLarge: the file is over a size, nesting or value-length limit.
        ValueError: the file is not TOML.
    """
    read_config_file(config_path())  # the limits, before pydantic-settings parses it
    clean = {k: v for k, v in overrides.items() if v not in (None, "", {})}
    return Settings(**clean)
