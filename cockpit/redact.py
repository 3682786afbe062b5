"""Secrets redacted where they enter cockpit, so no screen, incident, export or bundle
holds them.

Where secrets come in, and what is done there:

- the Prometheus URL (``https://user:pass@host``): the config moves the userinfo into
  basic auth and keeps the URL without it (:func:`split_userinfo`,
  :class:`cockpit.config.PrometheusSettings`); a URL shown to the user, written to a file
  (incident, bundle, export) or put in a suggested command or a log line passes
  :func:`public_url` first (no userinfo, query string or fragment: a proxy from
  ``HTTPS_PROXY`` or a URL given on the command line can carry them too);
- container ``args``/``command`` and ``env`` (:func:`cockpit.models.kube.container_of`):
  the value of a flag or variable whose name looks like a secret (:func:`secret_name`),
  e.g. ``--api-key``, ``HF_TOKEN``, ``DB_PASSWORD``, becomes a :func:`mask` token;
- Helm values (:func:`cockpit.sources.kubernetes.decode_helm_release`): every value
  under a secret-looking key (``db.password``, ``auth.*``) is masked
  (:func:`redact_tree`); a Helm release is the only Secret object cockpit reads, and its
  rendered manifest is never kept;
- free text from outside (other args, env and Helm values, event and termination
  messages, pod logs, pasted logs): :func:`redact_text` masks URL userinfo, the
  credentials of ``Authorization``/``Cookie``/API-key headers, ``Bearer``/``Basic``
  credentials and ``password=…``/``token=…`` pairs.

A mask token is ``•••`` plus 8 hex digits of an HMAC-SHA256 under a key drawn once per
process and never stored: two copies of one secret read by the same process compare
equal (so a rollout diff still says it changed) and nothing in a bundle can be turned
back into the secret. Diffs show a masked value as ``••• (changed)``
(:class:`cockpit.analysis.changes.DiffLine`).
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import hmac
import itertools
import os
import re
import urllib.parse
from typing import Any

MASK = "•••"
"""What is shown in place of a secret."""

_KEY = os.urandom(32)

SECRET_WORDS = frozenset(
    {
        "password",
        "passwd",
        "pwd",
        "pass",
        "secret",
        "token",
        "key",
        "apikey",
        "credential",
        "credentials",
        "auth",
        "authorization",
        "cookie",
        "bearer",
        "private",
        "signature",
        "dsn",
    }
)
"""Words that make a name secret-looking (``--api-key``, ``HF_TOKEN``, ``db.password``):
one of them as a whole word of the name, words split at ``-``, ``_``, ``.``, ``/`` and
camel case (``apiKey``). ``max-tokens`` or ``tokenizer`` are not secret."""

_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def secret_name(name: str) -> bool:
    """Whether ``name`` (a flag, variable or values key) looks like it holds a secret."""
    return any(w.lower() in SECRET_WORDS for w in _WORDS.findall(name))


def mask(value: str) -> str:
    """The token that stands for ``value``: ``•••`` and a keyed digest (``""`` stays ``""``)."""
    if not value or value.startswith(MASK):
        return value
    digest = hmac.new(_KEY, value.encode("utf-8", "surrogatepass"), hashlib.sha256)
    return MASK + digest.hexdigest()[:8]


def masked(value: str) -> bool:
    """Whether ``value`` is a :func:`mask` token (or holds one)."""
    return MASK in value


_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@:]+(?::[^/\s@]*)?@")
_HEADER = re.compile(
    r"(?i)\b((?:proxy-)?authorization|cookie|set-cookie|x-api-key|api-key|x-auth-token"
    r"|x-access-token|private-token)(\s*[:=]\s*)([\"']?)([^\"'\r\n]+)"
)
_BEARER = re.compile(r"(?i)\b(bearer)(\s+)([A-Za-z0-9._~+/=-]{8,})")
_BASIC = re.compile(r"\b(Basic)(\s+)([A-Za-z0-9+/]{6,}={0,2})")
_PAIR = re.compile(r"([A-Za-z][A-Za-z0-9_.-]*)(\s*[=:]\s*)(\"?)([^\s\"&,;]{3,})")


def _basic(m: re.Match[str]) -> str:
    try:
        decoded = base64.b64decode(m.group(3) + "==", validate=False).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return m.group()
    if ":" not in decoded:
        return m.group()
    return f"{m.group(1)}{m.group(2)}{mask(m.group(3))}"


COUNT_WORDS = frozenset({"token"})
"""Secret words that also count things in a serving log: SGLang's ``#new-token: 8192``,
``#cached-token: 0`` and ``token usage: 0.93`` are token counts and shares, the very
evidence of a long-prompt client, never credentials."""
_NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?%?")


def token_count(name: str, value: str) -> bool:
    """Whether ``name: value`` is a count, not a secret: every secret word of ``name`` is
    one of :data:`COUNT_WORDS` and ``value`` is a plain number (``8192``, ``0.93``,
    ``71%``). A credential is never a bare number of that kind; a ``password: 1234`` is
    still masked."""
    words = {w.lower() for w in _WORDS.findall(name)} & SECRET_WORDS
    return bool(words) and words <= COUNT_WORDS and _NUMBER.fullmatch(value) is not None


def _pair(m: re.Match[str]) -> str:
    if m.group(4).startswith(MASK) or token_count(m.group(1), m.group(4)):
        return m.group()
    if not secret_name(m.group(1)):
        # The value may hold pairs of its own (``url=http://h/p?token=…``,
        # ``https://h/p?password=…``): look inside it rather than skip it whole.
        return f"{m.group(1)}{m.group(2)}{m.group(3)}{_PAIR.sub(_pair, m.group(4))}"
    return f"{m.group(1)}{m.group(2)}{m.group(3)}{mask(m.group(4))}"


_WORD_HINTS = {w: re.compile(re.escape(w) + r"[a-z0-9_.-]*\s*[=:]") for w in sorted(SECRET_WORDS)}
_LITERAL_HINTS = {"bearer": re.compile(r"bearer\s"), "basic": re.compile(r"basic\s")}
_USERINFO_HINT = re.compile(r"://[^/\s@]*@")
_HINTS_SHORT_FIRST = sorted(
    (*_WORD_HINTS.items(), *_LITERAL_HINTS.items()), key=lambda item: len(item[0])
)


def hinted_lines(low: str, starts: list[int], vocab: str) -> set[int]:
    """Indices of the lines of a block that :func:`redact_text` may change — a superset,
    found with one literal-prefixed scan per secret word the block holds at all.

    Args:
        low: The block's lines joined with ``\n``, lower-cased.
        starts: Offset in ``low`` of each line's first character.
        vocab: The block's letter runs joined with spaces (a word absent from it cannot
            occur in the block, so its scan is skipped).

    A line matches when it holds a secret word followed by the rest of a name and
    ``=``/``:`` (headers, ``name=value`` pairs), ``bearer``/``basic`` and whitespace, or
    URL userinfo (``://…@``); every substitution of :func:`redact_text` needs one of them.
    """
    return {bisect.bisect_right(starts, p) - 1 for p in _hint_positions(low, vocab)}


def _hint_positions(low: str, vocab: str) -> list[int]:
    """Offsets in ``low`` where a hint of :func:`hinted_lines` starts."""
    positions: list[int] = []
    absent: list[str] = []
    for word, rx in _HINTS_SHORT_FIRST:
        # A word holding one found absent is absent too (``password`` after ``pass``):
        # each scan of a 5 MB log costs milliseconds.
        if any(a in word for a in absent) or word not in vocab:
            absent.append(word)
            continue
        positions += [m.start() for m in rx.finditer(low)]
    if "@" in low and "://" in low:
        positions += [m.start() for m in _USERINFO_HINT.finditer(low)]
    return positions


def redact_lines(lines: list[str]) -> list[str]:
    """:func:`redact_text` of each line, run only on the lines :func:`hinted_lines` finds
    (the list itself when none may hold a secret)."""
    return _redact_hinted(lines, "\n".join(lines).lower())


def redact_log(text: str) -> str:
    """``text`` (lines separated by ``\n``) with :func:`redact_text` run on each line
    that may hold a secret: the same result as joining :func:`redact_lines` of its
    lines, but a log without any hint (most of them) is returned as it is, never split
    into lines (a 5 MB log: one lower-cased copy and a few literal scans)."""
    low = text.lower()
    # ``low`` itself stands for the vocabulary: a word it contains may match, one it
    # lacks cannot (the same lines as the letter-run vocabulary, without building it).
    if not _hint_positions(low, low):
        return text
    return "\n".join(_redact_hinted(text.split("\n"), low))


def _redact_hinted(lines: list[str], low: str) -> list[str]:
    starts = list(itertools.accumulate((len(ln) + 1 for ln in lines[:-1]), initial=0))
    hits = hinted_lines(low, starts, low)
    if not hits:
        return lines
    out = list(lines)
    for i in hits:
        out[i] = redact_text(out[i])
    return out


def redact_text(text: str) -> str:
    """``text`` with credentials masked: URL userinfo (``https://•••@host``), header
    values of Authorization, Cookie and API-key headers, ``Bearer`` tokens, ``Basic``
    credentials (base64 of ``user:password``), and ``name=value``/``name: value`` pairs
    whose name looks like a secret (:func:`secret_name`: ``password=…``, ``api_key: …``;
    not ``max_tokens=…``).

    Idempotent; text without ``=``, ``:``, ``@`` or the two schemes is returned as is.
    """
    if not text:
        return text
    if "@" in text:
        text = _USERINFO.sub(lambda m: f"{m.group(1)}{MASK}@", text)
    if ":" in text or "=" in text:
        text = _HEADER.sub(
            lambda m: (
                m.group()
                if m.group(4).startswith(MASK)
                else f"{m.group(1)}{m.group(2)}{m.group(3)}{mask(m.group(4))}"
            ),
            text,
        )
        text = _PAIR.sub(_pair, text)
    text = _BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}{mask(m.group(3))}", text)
    return _BASIC.sub(_basic, text)


def redact_args(args: list[str]) -> list[str]:
    """Container arguments with the value of every secret-looking flag masked
    (``--api-key X``, ``--api-key=X``, ``-p=X``) and the rest through
    :func:`redact_text`."""
    out: list[str] = []
    hide_next = False
    for a in args:
        if hide_next and not a.startswith("-"):
            out.append(mask(a))
            hide_next = False
            continue
        hide_next = False
        if a.startswith("-"):
            flag, eq, value = a.partition("=")
            if secret_name(flag):
                if eq:
                    out.append(f"{flag}={mask(value)}")
                else:
                    out.append(a)
                    hide_next = True
                continue
        out.append(redact_text(a))
    return out


def redact_tree(value: Any, secret: bool = False) -> Any:
    """A JSON-like tree (Helm values) with every leaf under a secret-looking key, and
    every value of an embedded Secret object (``data``, ``stringData``), masked; every
    other string through :func:`redact_text`."""
    if isinstance(value, dict):
        # A Secret object embedded in the values (extraObjects, say): all of its data.
        in_secret = value.get("kind") == "Secret"
        return {
            k: redact_tree(
                v, secret or secret_name(str(k)) or (in_secret and k in ("data", "stringData"))
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [redact_tree(v, secret) for v in value]
    if secret and value is not None and value != "":
        return mask(value if isinstance(value, str) else repr(value))
    if isinstance(value, str):
        return redact_text(value)
    return value


def public_url(url: str) -> str:
    """``url`` as it may be shown, written or logged: without user, password, query string
    or fragment (``https://sre:pw@prom:9090/p?token=x`` → ``https://prom:9090/p``). Text
    that is not a URL (no ``://``) is returned as it is."""
    if "://" not in url:
        return url
    try:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:  # a malformed port or IPv6 literal: keep only what precedes any secret
        scheme, _, rest = url.partition("://")
        host_part = re.split(r"[/?#]", rest.rsplit("@", 1)[-1], maxsplit=1)[0]
        return f"{scheme}://{host_part}"
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port else host
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def split_userinfo(url: str) -> tuple[str, str, str]:
    """``(url without userinfo, user, password)``; user and password percent-decoded,
    ``""`` when absent."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url, "", ""
    userinfo, host = parts.netloc.rsplit("@", 1)
    user, _, password = userinfo.partition(":")
    bare = urllib.parse.urlunsplit(parts._replace(netloc=host))
    return bare, urllib.parse.unquote(user), urllib.parse.unquote(password)
