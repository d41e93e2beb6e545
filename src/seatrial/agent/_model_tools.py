"""A ``model:`` agent's tool schemas, as the model is sent them (OpenAI ``tools``).

Read from an inline list or a JSON/YAML file holding: OpenAI function tools
(``{type: function, function: {name, description, parameters}}`` or just the inner object),
an MCP server's ``tools/list`` result (``{tools: [{name, description, inputSchema}]}``), or an
OpenAPI 3 document, whose operations become one tool each (named by ``operationId``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from seatrial.errors import AgentSpecError
from seatrial.i18n import gettext as _

_METHODS = ("get", "post", "put", "patch", "delete")
_NAME = re.compile(r"[^A-Za-z0-9-]+")
_REF_DEPTH = 20


def load_tools(source: str | list[Any] | None, base_dir: Path, where: str) -> list[dict[str, Any]]:
    """The tools of ``source`` (an inline list, or a file relative to ``base_dir``) in
    OpenAI's format; ``where`` names the setting in error messages."""
    if source is None:
        return []
    if isinstance(source, str):
        path = Path(source)
        path = path if path.is_absolute() else base_dir / path
        data = _read(path, where)
        origin = str(path)
    else:
        data, origin = source, where
    tools = _tools_of(data, origin)
    names = [tool["function"]["name"] for tool in tools]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise AgentSpecError(
            _("{where}: tool {tools} defined twice; rename one").format(
                where=origin, tools=", ".join(twice)
            )
        )
    return tools


def _read(path: Path, where: str) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise AgentSpecError(
            _(
                "{where}: cannot read the tool file {path}: {why}; fix the path (relative to "
                "the folder of seatrial.yaml)"
            ).format(where=where, path=path, why=exc.strerror or exc)
        ) from exc
    try:
        return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise AgentSpecError(
            _("{path}: not valid JSON or YAML: {error}").format(path=path, error=exc)
        ) from exc


def _tools_of(data: Any, origin: str) -> list[dict[str, Any]]:
    if isinstance(data, Mapping) and ("openapi" in data or "swagger" in data):
        return _from_openapi(data, origin)
    if isinstance(data, Mapping) and "tools" in data:
        data = data["tools"]  # an MCP tools/list result, or {tools: [...]} written by hand
    if not isinstance(data, list):
        raise AgentSpecError(
            _(
                "{where}: expected a list of tool schemas, an MCP `tools/list` result or an "
                "OpenAPI document, found {type}"
            ).format(where=origin, type=type(data).__name__)
        )
    return [_one(item, origin, index) for index, item in enumerate(data)]


def _one(item: Any, origin: str, index: int) -> dict[str, Any]:
    if isinstance(item, Mapping) and item.get("type") == "function" and "function" in item:
        item = item["function"]
    if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
        raise AgentSpecError(
            _("{where}: tool {n} has no `name`; write {openai} (OpenAI) or {mcp} (MCP)").format(
                where=origin,
                n=index + 1,
                openai="{name, description, parameters}",
                mcp="{name, description, inputSchema}",
            )
        )
    parameters = item.get("parameters", item.get("inputSchema"))
    if parameters is None:
        parameters = {"type": "object", "properties": {}}
    if not isinstance(parameters, Mapping):
        raise AgentSpecError(
            _("{where}: tool `{name}`: `parameters` must be a mapping").format(
                where=origin, name=item["name"]
            )
        )
    function: dict[str, Any] = {"name": item["name"], "parameters": dict(parameters)}
    if item.get("description"):
        function["description"] = str(item["description"])
    return {"type": "function", "function": function}


def _from_openapi(document: Mapping[str, Any], origin: str) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    for path, operations in (document.get("paths") or {}).items():
        if not isinstance(operations, Mapping):
            continue
        shared = list(operations.get("parameters") or [])
        for method in _METHODS:
            operation = operations.get(method)
            if isinstance(operation, Mapping):
                tools.append(_operation(document, path, method, operation, shared))
    if not tools:
        raise AgentSpecError(
            _("{where}: the OpenAPI document has no operations under `paths`").format(where=origin)
        )
    return tools


def _operation(
    document: Mapping[str, Any],
    path: str,
    method: str,
    operation: Mapping[str, Any],
    shared: list[Any],
) -> dict[str, Any]:
    name = operation.get("operationId") or _NAME.sub("_", f"{method}_{path}").strip("_")
    properties: dict[str, Any] = {}
    required: list[str] = []
    for raw in [*shared, *(operation.get("parameters") or [])]:
        parameter = _resolve(document, raw)
        if not isinstance(parameter, Mapping) or "name" not in parameter:
            continue
        schema = dict(_resolve(document, parameter.get("schema") or {"type": "string"}))
        if parameter.get("description"):
            schema.setdefault("description", parameter["description"])
        properties[parameter["name"]] = schema
        if parameter.get("required") or parameter.get("in") == "path":
            required.append(parameter["name"])
    body = _resolve(document, operation.get("requestBody") or {})
    content = body.get("content") or {} if isinstance(body, Mapping) else {}
    schema = _resolve(document, (content.get("application/json") or {}).get("schema") or {})
    if isinstance(schema, Mapping) and schema.get("type", "object") == "object":
        properties.update(schema.get("properties") or {})
        required += [r for r in schema.get("required") or [] if r not in required]
    elif schema:
        properties["body"] = schema
        if body.get("required"):
            required.append("body")
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    function: dict[str, Any] = {"name": str(name), "parameters": parameters}
    description = operation.get("description") or operation.get("summary")
    if description:
        function["description"] = str(description)
    return {"type": "function", "function": function}


def _resolve(document: Mapping[str, Any], value: Any, depth: int = 0) -> Any:
    """``value`` with local ``$ref``s (``#/components/...``) replaced by what they point at."""
    if depth > _REF_DEPTH:
        return {}  # a self-referencing schema: the model gets its outer levels only
    if isinstance(value, Mapping):
        ref = value.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            target: Any = document
            for part in ref[2:].split("/"):
                target = target.get(part, {}) if isinstance(target, Mapping) else {}
            return _resolve(document, target, depth + 1)
        return {k: _resolve(document, v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(document, v, depth + 1) for v in value]
    return value


def argument_problems(tool: Mapping[str, Any], arguments: Mapping[str, Any]) -> str | None:
    """What is wrong with ``arguments`` for ``tool`` (an OpenAI tool entry), as the model is
    told it: unexpected and missing arguments, values the schema refuses, and the parameters
    the tool takes; None when they fit its schema.

    An argument the schema does not list is unexpected unless ``additionalProperties``
    allows it: an implementation called with it would only fail with a Python TypeError.
    """
    inner = tool.get("function")
    function: Mapping[str, Any] = inner if isinstance(inner, Mapping) else tool
    name = str(function.get("name") or "")
    schema = function.get("parameters")
    if not isinstance(schema, Mapping):
        return None
    listed = schema.get("properties")
    properties: Mapping[str, Any] = listed if isinstance(listed, Mapping) else {}
    required = [str(r) for r in schema.get("required") or [] if isinstance(r, str)]
    problems: list[str] = []
    if isinstance(listed, Mapping) and not schema.get("additionalProperties"):
        extra = [key for key in arguments if key not in properties]
        problems += [f"unexpected argument `{key}`" for key in extra]
    problems += [f"missing required argument `{key}`" for key in required if key not in arguments]
    problems += _value_problems(schema, arguments)
    if not problems:
        return None
    takes = ", ".join(_parameter(key, properties[key], key in required) for key in properties)
    return (
        f"invalid arguments for `{name}`: {'; '.join(problems)}. `{name}` takes "
        f"{takes or 'no arguments'}; call `{name}` again with these arguments"
    )


def _value_problems(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> list[str]:
    """Values the schema refuses (types, enums ...); unexpected and missing keys are
    reported by the caller in plainer words."""
    try:
        validator = jsonschema.Draft202012Validator(dict(schema))
        errors = sorted(validator.iter_errors(dict(arguments)), key=lambda e: list(e.path))
    except jsonschema.SchemaError:
        return []  # a schema the validator cannot read: the tool judges the values itself
    problems = []
    for error in errors:
        if error.validator in ("required", "additionalProperties"):
            continue
        where = ".".join(str(part) for part in error.path)
        shown = json.dumps(error.instance, ensure_ascii=False, default=str)
        if error.validator == "enum":
            allowed = ", ".join(json.dumps(v, ensure_ascii=False) for v in error.validator_value)
            problems.append(f"`{where}`: {shown} is not an allowed value; allowed: {allowed}")
        elif error.validator == "type":
            problems.append(f"`{where}`: {shown} is not of type {error.validator_value}")
        else:
            problems.append(f"`{where}`: {error.message}")
    return problems


def _parameter(key: str, schema: Any, required: bool) -> str:
    about: list[str] = []
    if isinstance(schema, Mapping):
        if isinstance(schema.get("type"), str):
            about.append(schema["type"])
        if isinstance(schema.get("enum"), list):
            values = (json.dumps(v, ensure_ascii=False) for v in schema["enum"])
            about.append("one of " + ", ".join(values))
    if required:
        about.append("required")
    return f"`{key}` ({', '.join(about)})" if about else f"`{key}`"
