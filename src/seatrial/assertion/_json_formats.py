"""JSON Schema ``format`` checks, as promptfoo applies them (ajv with ajv-formats).

jsonschema only asserts the formats it has a checker for and silently ignores the rest, and
which checkers it has depends on optional packages that happen to be installed. A schema that
says ``format: date-time`` must fail a reply that is not one on every machine, so Seatrial
keeps its own checker with every format promptfoo knows, and rejects a schema that names any
other format when the case is loaded (as ajv's strict mode does).
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import ipaddress
import re
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema import FormatChecker

_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})", re.ASCII)
_TIME = re.compile(
    r"(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?P<zone>[zZ]|[+-](\d{2})(?::?(\d{2}))?)?", re.ASCII
)
_DURATION = re.compile(
    r"P(?:(?P<weeks>\d+W)|(?P<date>(?:\d+Y)?(?:\d+M)?(?:\d+D)?)"
    r"(?:T(?P<time>(?:\d+H)?(?:\d+M)?(?:\d+S)?))?)",
    re.ASCII,
)
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*\.?", re.ASCII)
_EMAIL_LOCAL = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*")
_IPV4 = re.compile(r"(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})", re.ASCII)
_UUID = re.compile(r"(?:urn:uuid:)?[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}", re.IGNORECASE)
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")

# RFC 3986, assembled from its grammar's named parts so each can be read against the RFC.
_UNRESERVED = r"[A-Za-z0-9\-._~]"
_PCT_ENCODED = r"%[0-9A-Fa-f]{2}"
_SUB_DELIMS = r"[!$&'()*+,;=]"
_PCHAR = rf"(?:{_UNRESERVED}|{_PCT_ENCODED}|{_SUB_DELIMS}|[:@])"
_PCHAR_NO_COLON = rf"(?:{_UNRESERVED}|{_PCT_ENCODED}|{_SUB_DELIMS}|@)"
_SEGMENTS = rf"(?:/{_PCHAR}*)*"
_TAIL = rf"(?:\?(?:{_PCHAR}|[/?])*)?(?:#(?:{_PCHAR}|[/?])*)?"
_AUTHORITY_PATH = rf"//(?P<authority>[^/?#]*){_SEGMENTS}"
_URI = re.compile(
    rf"[A-Za-z][A-Za-z0-9+\-.]*:(?:{_AUTHORITY_PATH}|/?(?:{_PCHAR}+{_SEGMENTS})?){_TAIL}"
)
_RELATIVE_REF = re.compile(
    rf"(?:{_AUTHORITY_PATH}|/(?:{_PCHAR}+{_SEGMENTS})?|(?:{_PCHAR_NO_COLON}+{_SEGMENTS})?)" + _TAIL
)
_AUTHORITY = re.compile(
    rf"(?:(?:{_UNRESERVED}|{_PCT_ENCODED}|{_SUB_DELIMS}|:)*@)?"
    rf"(?P<host>\[[^\]]*\]|(?:{_UNRESERVED}|{_PCT_ENCODED}|{_SUB_DELIMS})*)(?::\d*)?"
)
_IP_FUTURE = re.compile(rf"v[0-9A-Fa-f]+\.(?:{_UNRESERVED}|{_SUB_DELIMS}|:)+")
_URL_HOST = re.compile(r"(?:[^\W_](?:[\w-]*[^\W_])?\.)+[^\W\d_]{2,}\.?")
_TEMPLATE_EXPRESSION = re.compile(
    r"[+#./;?&=,!@|]?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+(?::[1-9]\d{0,3}|\*)?"
    r"(?:,(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+(?::[1-9]\d{0,3}|\*)?)*"
)
_JSON_POINTER = re.compile(r"(?:/(?:[^~/]|~[01])*)*")
# `~` is written `~0` inside a pointer, so it is not among the plain characters here.
_FRAGMENT_POINTER = re.compile(r"#(?:/(?:[A-Za-z0-9\-._!$&'()*+,;:=@]|%[0-9A-Fa-f]{2}|~[01])*)*")
_RELATIVE_POINTER = re.compile(r"(?:0|[1-9]\d*)(?:#|(?:/(?:[^~/]|~[01])*)*)")


def _date(text: str) -> bool:
    found = _DATE.fullmatch(text)
    if not found:
        return False
    try:
        dt.date(*(int(part) for part in found.groups()))
    except ValueError:
        return False
    return True


def _time(text: str, *, zone_required: bool) -> bool:
    found = _TIME.fullmatch(text)
    if not found:
        return False
    hour, minute, second = (int(part) for part in found.group(1, 2, 3))
    leap_second = (hour, minute, second) == (23, 59, 60)
    if not leap_second and (hour > 23 or minute > 59 or second > 59):
        return False
    zone_hour, zone_minute = found.group(5, 6)
    if zone_hour is not None and (int(zone_hour) > 23 or int(zone_minute or 0) > 59):
        return False
    return found.group("zone") is not None or not zone_required


def _date_time(text: str, *, zone_required: bool) -> bool:
    parts = re.split(r"[Tt ]", text)
    return len(parts) == 2 and _date(parts[0]) and _time(parts[1], zone_required=zone_required)


def _duration(text: str) -> bool:
    found = _DURATION.fullmatch(text)
    if not found:
        return False
    if found.group("weeks"):
        return True
    date, time = found.group("date"), found.group("time")
    # "P" alone, and a "T" with nothing after it, say no length at all.
    return time != "" and bool(date or time)


def _hostname(text: str) -> bool:
    return len(text.rstrip(".")) <= 253 and _HOSTNAME.fullmatch(text) is not None


def _email(text: str) -> bool:
    local, at, domain = text.rpartition("@")
    return (
        bool(at)
        and _EMAIL_LOCAL.fullmatch(local) is not None
        and "." in domain
        and not domain.endswith(".")
        and _hostname(domain)
    )


def _ipv4(text: str) -> bool:
    found = _IPV4.fullmatch(text)
    return found is not None and all(int(part) <= 255 for part in found.groups())


def _ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _authority(authority: str | None) -> bool:
    if authority is None:
        return True
    found = _AUTHORITY.fullmatch(authority)
    if not found:
        return False
    host = found.group("host")
    if host.startswith("["):
        inner = host[1:-1]
        return _IP_FUTURE.fullmatch(inner) is not None or _ipv6(inner)
    return True


def _uri(text: str) -> bool:
    found = _URI.fullmatch(text)
    return found is not None and _authority(found.group("authority"))


def _uri_reference(text: str) -> bool:
    if _uri(text):
        return True
    found = _RELATIVE_REF.fullmatch(text)
    return found is not None and _authority(found.group("authority"))


def _url(text: str) -> bool:
    scheme, sep, rest = text.partition("://")
    if not sep or scheme.lower() not in ("http", "https", "ftp") or any(c.isspace() for c in text):
        return False
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    host_port = authority.rpartition("@")[2]
    host, colon, port = host_port.partition(":")
    if colon and not (port.isascii() and port.isdigit() and 2 <= len(port) <= 5):
        return False
    return _ipv4(host) or _URL_HOST.fullmatch(host) is not None


def _uri_template(text: str) -> bool:
    position = 0
    for found in re.finditer(r"\{([^{}]*)\}", text):
        if not _template_literal(text[position : found.start()]):
            return False
        if _TEMPLATE_EXPRESSION.fullmatch(found.group(1)) is None:
            return False
        position = found.end()
    return _template_literal(text[position:])


def _template_literal(text: str) -> bool:
    # RFC 6570 literals: anything but controls, space and the characters it reserves.
    text = re.sub(r"%[0-9A-Fa-f]{2}", "", text)
    return not any(ord(c) <= 0x20 or c in "\"'<>%\\^`{|}" for c in text)


def _regex(text: str) -> bool:
    try:
        re.compile(text)
    except re.error:
        return False
    return True


def _byte(text: str) -> bool:
    if _BASE64.fullmatch(text) is None:
        return False
    try:
        base64.b64decode(text, validate=True)
    except binascii.Error:
        return False
    return True


def _integer_within(value: int | float, bits: int) -> bool:
    limit = 2 ** (bits - 1)
    if isinstance(value, float) and not value.is_integer():
        return False
    return bool(-limit <= value <= limit - 1)


_STRING_FORMATS: dict[str, Any] = {
    "date": _date,
    "time": lambda text: _time(text, zone_required=True),
    "date-time": lambda text: _date_time(text, zone_required=True),
    "iso-time": lambda text: _time(text, zone_required=False),
    "iso-date-time": lambda text: _date_time(text, zone_required=False),
    "duration": _duration,
    "uri": _uri,
    "uri-reference": _uri_reference,
    "uri-template": _uri_template,
    "url": _url,
    "email": _email,
    "hostname": _hostname,
    "ipv4": _ipv4,
    "ipv6": _ipv6,
    "regex": _regex,
    "uuid": lambda text: _UUID.fullmatch(text) is not None,
    "json-pointer": lambda text: _JSON_POINTER.fullmatch(text) is not None,
    "json-pointer-uri-fragment": lambda text: _FRAGMENT_POINTER.fullmatch(text) is not None,
    "relative-json-pointer": lambda text: _RELATIVE_POINTER.fullmatch(text) is not None,
    "byte": _byte,
    # OpenAPI's names: any string is a password or binary data; they only document intent.
    "password": lambda text: True,
    "binary": lambda text: True,
}
_NUMBER_FORMATS: dict[str, Any] = {
    "int32": lambda value: _integer_within(value, 32),
    "int64": lambda value: _integer_within(value, 64),
    "float": lambda value: True,
    "double": lambda value: True,
}


@cache
def format_checker() -> FormatChecker:
    """Checks every format in :data:`KNOWN_FORMATS`; pass it to a validator as
    ``format_checker``. Made when first asked for: jsonschema is imported only by a check
    or a suite that uses a schema (docs/performance.md, "Starting the command")."""
    from jsonschema import FormatChecker

    checker = FormatChecker(formats=())
    # A format constrains only values of its own type: `format: email` says nothing about 42.
    for name, check in _STRING_FORMATS.items():
        checker.checks(name)(lambda value, check=check: not isinstance(value, str) or check(value))
    for name, check in _NUMBER_FORMATS.items():
        checker.checks(name)(
            lambda value, check=check: (
                isinstance(value, bool) or not isinstance(value, int | float) or check(value)
            )
        )
    return checker


KNOWN_FORMATS = frozenset(_STRING_FORMATS) | frozenset(_NUMBER_FORMATS)
"""Every ``format`` a schema may name."""

_NOT_SUBSCHEMAS = frozenset({"const", "enum", "default", "examples", "example"})


def named_formats(schema: Any) -> Iterator[str]:
    """Every ``format`` the schema names, in any of its subschemas."""
    if isinstance(schema, dict):
        named = schema.get("format")
        if isinstance(named, str):
            yield named
        for key, value in schema.items():
            if key not in _NOT_SUBSCHEMAS:
                yield from named_formats(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from named_formats(item)
