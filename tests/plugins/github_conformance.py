"""The recorded GitHub traffic (`github_traffic`) checked against GitHub's own OpenAPI
description (`github_description`), with validators from PyPI: openapi-core for each REST
request and answer (path, query, headers, body; status, headers, body), and
openapi-schema-validator for each webhook payload against the description's webhook schema.

A REST exchange is checked against the description of the API version the request asked for
(none: 2022-11-28); a webhook against the description as published (2022-11-28's shape, the
one the sandbox sends). What is not checked, and the places where the description lags the
version in use or says what GitHub does not do, are listed here and nowhere else
(`OUT_OF_SCOPE`, `INFRASTRUCTURE_STATUSES`, `EXCEPTIONS`), each with its reason. How GitHub's
`nullable` is read is `github_description`'s business.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote

from jsonschema.exceptions import ValidationError
from openapi_core import Config, OpenAPI
from openapi_core.testing import MockRequest, MockResponse
from openapi_schema_validator import OAS30Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4

from tests.plugins import github_description

DESCRIPTION_URI = "urn:github-description"  # where webhook schemas' `#/...` refs resolve
SERVER = "https://api.github.com"  # the description's server; the sandbox's host is not checked
DEFAULT_VERSION = "2022-11-28"  # GitHub's answer to a request that names no version

# What the sandbox serves that is not GitHub's REST API, by path: nothing to check it against.
OUT_OF_SCOPE = (
    (re.compile(r"^/_sandbox(/|$)"), "the sandbox's own control API"),
    (re.compile(r"\.git/(info/refs|git-upload-pack|git-receive-pack)$"), "git smart HTTP"),
    (re.compile(r"^/(organizations/[^/]+/)?settings/apps/new$"), "the manifest's browser step"),
)
# An answer of GitHub's infrastructure rather than of the operation (the description lists
# these statuses for no operation): checked neither for shape nor status.
INFRASTRUCTURE_STATUSES = frozenset({429, 500, 502, 503, 504})

# Where the description lags the API version in use, or says what GitHub does not do:
# (operation id, where, a part of the rule's text, the reason).
EXCEPTIONS: tuple[tuple[str, str, str, str], ...] = (
    (
        "repos/get-content",
        "response 200",
        "mimetype not found: application/vnd.github.raw",
        "the raw media type (`Accept: application/vnd.github.raw`) is in the operation's text "
        "but not among its answer's content types",
    ),
    (
        "apps/list-installations",
        "response 200",
        "0/account: ",
        "this operation's copy of the installation schema asks its account to be a user and an "
        "enterprise at once (allOf), where the installation schema itself, used by the other "
        "installation operations, says either one (anyOf)",
    ),
    *(
        (
            "actions/create-workflow-dispatch",
            f"response {status}",
            f"Unknown response http status: {status}",
            f"the operation lists only its 200 and 204, but GitHub answers {why}",
        )
        for status, why in (
            (403, "403 to an App without `actions: write` (with x-accepted-github-permissions)"),
            (404, "404 for a workflow file the repository does not have"),
            (422, "422 for a workflow without a workflow_dispatch trigger or with other inputs"),
        )
    ),
)


@dataclass(frozen=True)
class Problem:
    test: str
    operation: str
    where: str  # "request", "response 200", "webhook"
    rule: str

    def __str__(self) -> str:
        return f"{self.operation} {self.where}: {self.rule} (in {self.test})"


@dataclass
class Report:
    problems: list[Problem] = field(default_factory=list)
    operations: Counter[str] = field(default_factory=Counter)  # "version operation" -> count
    requests: int = 0
    responses: int = 0
    webhooks: int = 0
    not_checked: Counter[str] = field(default_factory=Counter)  # reason -> count


def _headers(pairs: Iterable[Iterable[str]]) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in pairs}


def _rule(error: Exception) -> Iterator[str]:
    """Each schema rule an openapi-core error stands for, with the value's place."""
    cause = error.__cause__ or error.__context__
    schema_errors = getattr(cause, "schema_errors", None) or getattr(error, "schema_errors", None)
    if schema_errors:
        for item in schema_errors:
            yield _schema_rule(item)
        return
    text, why = str(error), str(cause) if cause is not None else ""
    yield f"{type(error).__name__}: {text}" + (f": {why}" if why and why not in text else "")


def _schema_rule(error: ValidationError) -> str:
    place = "/".join(str(p) for p in error.absolute_path) or "(root)"
    return f"{place}: {error.message} [{error.validator}]"


SLASHED = ("{path}", "{ref}", "{branch}")


class Operations:
    """Which of the description's paths a request's path is, as GitHub routes it: a parameter
    is one path segment, except that the last one may span several (a file path, a ref such
    as `heads/main`, a branch such as `ourobot/issue-1`); the most literal template wins."""

    def __init__(self, paths: dict[str, Any]) -> None:
        self._paths = paths
        self._narrow: list[tuple[int, re.Pattern[str], str]] = []
        self._wide: list[tuple[int, re.Pattern[str], str]] = []
        for template in paths:
            parts = re.split(r"\{[^}]+\}", template)
            literal = [re.escape(p) for p in parts]
            rank = -sum(len(p) for p in parts)  # more literal text first
            self._narrow.append((rank, re.compile("^" + "[^/]+".join(literal) + "$"), template))
            if template.endswith(SLASHED):
                wide = "[^/]+".join(literal[:-1]) + "(?P<last>.+)" + literal[-1]
                self._wide.append((rank, re.compile(f"^{wide}$"), template))
        self._narrow.sort(key=lambda t: t[0])
        self._wide.sort(key=lambda t: t[0])

    def find(self, method: str, path: str) -> tuple[str, str] | None:
        """(template, path with slashes inside the last parameter escaped), or None."""
        for _, pattern, template in self._narrow:
            if pattern.match(path) and method in self._paths[template]:
                return template, path
        for _, pattern, template in self._wide:
            match = pattern.match(path)
            if match and method in self._paths[template]:
                start, end = match.span("last")
                return template, path[:start] + quote(match["last"], safe="") + path[end:]
        return None


class Checker:
    """openapi-core over the description of each version; one validator per operation, built
    when first needed and reused (a description holding only that path: openapi-core looks a
    request's path up by trying each path it holds)."""

    def __init__(self, documents: dict[str, dict[str, Any]]) -> None:
        self._documents = documents
        self._operations = {v: Operations(d["paths"]) for v, d in documents.items()}
        self._apis: dict[tuple[str, str], OpenAPI] = {}
        self._request_rules: dict[tuple[Any, ...], list[str]] = {}
        hooks = documents[DEFAULT_VERSION]
        self._hooks = hooks.get("x-webhooks", {})
        resource = Resource.from_contents(hooks, default_specification=DRAFT4)
        self._registry: Registry[Any] = Registry().with_resource(DESCRIPTION_URI, resource)
        self._hook_validators: dict[str, OAS30Validator] = {}
        self.report = Report()

    def _api(self, version: str, template: str) -> OpenAPI:
        key = (version, template)
        if key not in self._apis:
            document = self._documents[version]
            one = {**document, "paths": {template: document["paths"][template]}}
            config = Config(spec_validator_cls=None)  # GitHub's description is not ours to lint
            self._apis[key] = OpenAPI.from_dict(one, config=config)
        return self._apis[key]

    # ---- REST --------------------------------------------------------------------------------
    def exchange(self, entry: dict[str, Any]) -> None:
        path = str(entry["path"])
        for pattern, reason in OUT_OF_SCOPE:
            if pattern.search(path):
                self.report.not_checked[reason] += 1
                return
        headers = _headers(entry.get("headers", ()))
        version = headers.get("x-github-api-version", DEFAULT_VERSION).strip()
        if version not in self._documents:
            self.report.not_checked[f"asked for API version {version} (answered 400)"] += 1
            return
        test, method = str(entry.get("test")), str(entry["method"]).lower()
        self.report.requests += 1
        found = self._operations[version].find(method, path)
        if found is None:
            self._problem(test, f"{method.upper()} {path}", "request",
                          "the description has no operation for this method and path")  # fmt: skip
            return
        template, escaped = found
        operation = str(self._documents[version]["paths"][template][method].get("operationId"))
        self.report.operations[f"{version} {operation}"] += 1
        api = self._api(version, template)
        request = self._request(entry, headers, escaped)
        for rule in self._request_errors(api, request, entry, version):
            self._problem(test, operation, "request", rule)
        status = entry.get("status")
        if not isinstance(status, int) or status in INFRASTRUCTURE_STATUSES:
            self.report.not_checked["GitHub's infrastructure answering (429, 5xx)"] += 1
            return
        response = self._response(entry, status)
        if response is None:
            self.report.not_checked["an answer too large to record"] += 1
            return
        self.report.responses += 1
        for error in api.iter_response_errors(request, response):
            for rule in _rule(error):
                self._problem(test, operation, f"response {status}", rule)

    def _request_errors(
        self, api: OpenAPI, request: MockRequest, entry: dict[str, Any], version: str
    ) -> list[str]:
        """A request's problems; the same request sent again is not checked again."""
        key = (version, entry["method"], entry["path"], entry.get("query"), entry.get("body"),
               request.content_type)  # fmt: skip
        if key not in self._request_rules:
            found = [rule for e in api.iter_request_errors(request) for rule in _rule(e)]
            self._request_rules[key] = found
        return self._request_rules[key]

    @staticmethod
    def _request(entry: dict[str, Any], headers: dict[str, str], path: str) -> MockRequest:
        body = entry.get("body")
        data = body.encode() if isinstance(body, str) else None
        content_type = headers.get("content-type", "application/json").split(";")[0].strip()
        return MockRequest(
            SERVER,
            str(entry["method"]).lower(),
            path,
            args=dict(parse_qsl(str(entry.get("query") or ""))),
            headers=headers,
            data=data,
            content_type=content_type,
        )

    @staticmethod
    def _response(entry: dict[str, Any], status: int) -> MockResponse | None:
        body = entry.get("response_body")
        if isinstance(body, dict):  # recorded as its size and digest
            return None
        headers = _headers(entry.get("response_headers", ()))
        content_type = headers.get("content-type", "application/json").split(";")[0].strip()
        data = body.encode() if isinstance(body, str) else b""
        return MockResponse(data, status_code=status, headers=headers, content_type=content_type)

    # ---- webhooks ----------------------------------------------------------------------------
    def webhook(self, entry: dict[str, Any]) -> None:
        event, action = str(entry["event"]), entry.get("action")
        name = event.replace("_", "-") + (f"-{action.replace('_', '-')}" if action else "")
        test = str(entry.get("test"))
        self.report.webhooks += 1
        self.report.operations[f"webhook {name}"] += 1
        hook = self._hooks.get(name)
        if hook is None:
            self._problem(test, f"webhook {name}", "webhook", "no such webhook in the description")
            return
        post = hook["post"]
        headers = _headers(entry.get("headers", ()))
        for parameter in post.get("parameters", []):
            value = headers.get(parameter["name"].lower())
            if value is None:
                if parameter.get("required"):
                    self._problem(test, name, "webhook", f"header {parameter['name']} missing")
                continue
            schema = parameter["schema"]
            for error in OAS30Validator(schema).iter_errors(value):
                self._problem(test, name, "webhook", f"header {parameter['name']}: {error.message}")
        payload = json.loads(entry["body"])
        for error in self._validator(name).iter_errors(payload):
            self._problem(test, name, "webhook", _schema_rule(error))

    def _validator(self, name: str) -> OAS30Validator:
        """The payload schema of webhook `name`, compiled once."""
        if name not in self._hook_validators:
            pointer = f"/x-webhooks/{name}/post/requestBody/content/application~1json/schema"
            schema = {"$ref": f"{DESCRIPTION_URI}#{pointer}"}
            self._hook_validators[name] = OAS30Validator(schema, registry=self._registry)
        return self._hook_validators[name]

    # ---- problems ----------------------------------------------------------------------------
    def _problem(self, test: str, operation: str, where: str, rule: str) -> None:
        for known_operation, known_where, known_rule, _ in EXCEPTIONS:
            if (known_operation, known_where) == (operation, where) and known_rule in rule:
                excepted = f"{operation} {where}: {known_rule.strip()} (excepted)"
                self.report.not_checked[excepted] += 1
                return
        self.report.problems.append(Problem(test, operation, where, rule))


def check_file(path: Path, checker: Checker) -> Report:
    with path.open() as lines:
        for line in lines:
            entry = json.loads(line)
            if entry["kind"] == "webhook":
                checker.webhook(entry)
            else:
                checker.exchange(entry)
    return checker.report


def checker() -> Checker:
    """A checker for every API version the sandbox speaks (raises `Unavailable`)."""
    versions = (DEFAULT_VERSION, "2026-03-10")
    return Checker({v: github_description.load(v) for v in versions})
