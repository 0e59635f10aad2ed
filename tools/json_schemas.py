"""Write the JSON Schemas (draft 2020-12) of envcheck's JSON documents to docs/schema/.

    python tools/json_schemas.py          # write the files
    python tools/json_schemas.py --check  # exit 1 when a file differs from the code

Facts, the install plan and smoke results are dataclasses: their schemas are read from the
field types, so a renamed or added field changes the schema in the same commit. The report,
and the wrappers of `install --json`, `smoke --json` and `tables --json`, are described
here, next to the code that builds them (envcheck/report/documents.py, report_dict).
Objects are closed (``additionalProperties: false``) wherever their keys are fixed, so a
key that appears, vanishes or changes type fails validation (tests/test_json_schema.py).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import typing
from pathlib import Path
from typing import Any, Dict, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from envcheck.facts import SCHEMA_VERSION as FACTS_SCHEMA_VERSION
from envcheck.facts import Facts
from envcheck.facts_codec import VALUES as FACT_VALUES
from envcheck.install.plan import PlanRecord
from envcheck.report.documents import (
    PLAN_SCHEMA_VERSION,
    RANKS_SCHEMA_VERSION,
    SMOKE_SCHEMA_VERSION,
    TABLES_SCHEMA_VERSION,
)
from envcheck.report.findings_text import REPORT_SCHEMA_VERSION
from envcheck.report.fleet_text import FLEET_SCHEMA_VERSION
from envcheck.report.scan_text import SCAN_SCHEMA_VERSION
from envcheck.smoke.runner import SmokeResult

OUT = Path(__file__).resolve().parent.parent / "docs" / "schema"
DRAFT = "https://json-schema.org/draft/2020-12/schema"
BASE = "urn:envcheck:schema:"
STR = {"type": "string"}
NULL_STR = {"type": ["string", "null"]}
STRINGS = {"type": "array", "items": STR}


def _type_schema(tp: Any, defs: Dict[str, Any]) -> Dict[str, Any]:
    """The schema of one Python type, dataclasses into ``defs``."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any:
        return {}
    if origin is typing.Union:
        members = [a for a in args if a is not type(None)]
        schemas = [_type_schema(m, defs) for m in members]
        # one schema when the members print alike (an arch list entry: Arch or Gfx, a string)
        inner = schemas[0] if all(m == schemas[0] for m in schemas) else {"anyOf": schemas}
        if type(None) in args:
            if set(inner) == {"type"} and isinstance(inner["type"], str):
                return {"type": [inner["type"], "null"]}
            return {"anyOf": [inner, {"type": "null"}]}
        return inner
    if origin in (list, List, tuple, Tuple):
        if origin in (tuple, Tuple) and args and args[-1] is not Ellipsis:
            items = [_type_schema(a, defs) for a in args]
            return {
                "type": "array",
                "prefixItems": items,
                "minItems": len(items),
                "maxItems": len(items),
            }
        item = args[0] if args else Any
        return {"type": "array", "items": _type_schema(item, defs)}
    if origin in (dict, Dict):
        value = args[1] if len(args) == 2 else Any
        return {"type": "object", "additionalProperties": _type_schema(value, defs)}
    if dataclasses.is_dataclass(tp):
        name = tp.__name__
        if name not in defs:
            defs[name] = {}  # a placeholder first: recursive types terminate
            defs[name] = _dataclass_schema(tp, defs)
        return {"$ref": f"#/$defs/{name}"}
    simple = {str: "string", int: "integer", float: "number", bool: "boolean"}
    if tp in simple:
        return {"type": simple[tp]}
    if tp in FACT_VALUES:  # a value Facts holds as the string it prints (ComputeCapability)
        return {"type": "string"}
    if isinstance(tp, type) and issubclass(tp, str):  # a str enum (SmokeStatus)
        return {"type": "string"}
    raise TypeError(f"no schema for {tp!r}")


def _dataclass_schema(
    cls: type, defs: Dict[str, Any], extra: Dict[str, Any] = ()
) -> Dict[str, Any]:  # type: ignore[assignment]
    hints = typing.get_type_hints(cls)
    props = {f.name: _type_schema(hints[f.name], defs) for f in dataclasses.fields(cls)}
    props.update(dict(extra))
    doc = (cls.__doc__ or "").strip().splitlines()
    out: Dict[str, Any] = {
        "type": "object",
        "properties": props,
        "required": sorted(props),
        "additionalProperties": False,
    }
    if doc and not doc[0].startswith(cls.__name__ + "("):
        out["description"] = doc[0]
    return out


def _document(
    name: str, version: int, title: str, body: Dict[str, Any], defs: Dict[str, Any]
) -> Dict[str, Any]:
    schema = {"$schema": DRAFT, "$id": f"{BASE}{name}", "title": title}
    schema.update(body)
    props = schema.setdefault("properties", {})
    if "schema_version" in props:
        props["schema_version"] = {"const": version}
    if defs:
        schema["$defs"] = dict(sorted(defs.items()))
    return schema


def _smoke_result(defs: Dict[str, Any]) -> Dict[str, Any]:
    schema = _dataclass_schema(SmokeResult, defs)
    schema["properties"]["status"] = {"enum": ["passed", "failed", "skipped", "timed_out"]}
    return schema


def facts_schema() -> Dict[str, Any]:
    defs: Dict[str, Any] = {}
    body = _dataclass_schema(Facts, defs)
    return _document("facts", FACTS_SCHEMA_VERSION, "envcheck Facts (probe --json)", body, defs)


def _plan(defs: Dict[str, Any]) -> Dict[str, Any]:
    """Planned.to_dict() and NoPlan.to_dict(): their one record, plus index_url."""
    return _dataclass_schema(PlanRecord, defs, {"index_url": NULL_STR})


def plan_schema() -> Dict[str, Any]:
    defs: Dict[str, Any] = {}
    body = _plan(defs)
    props = {
        "schema_version": {},
        "envcheck_version": STR,
        **body["properties"],
        "manager": STR,
        "command": NULL_STR,
        "argv": STRINGS,
        "steps": {"type": "array", "items": STRINGS},
    }
    body.update(properties=props, required=sorted(props))
    return _document("plan", PLAN_SCHEMA_VERSION, "envcheck install --json", body, defs)


def smoke_schema() -> Dict[str, Any]:
    defs: Dict[str, Any] = {"SmokeResult": _smoke_result({})}
    props = {
        "schema_version": {},
        "envcheck_version": STR,
        "passed": {"type": "boolean"},
        "gpus_not_exercised": NULL_STR,
        "results": {"type": "array", "items": {"$ref": "#/$defs/SmokeResult"}},
    }
    body = {
        "type": "object",
        "properties": props,
        "required": sorted(props),
        "additionalProperties": False,
    }
    return _document("smoke", SMOKE_SCHEMA_VERSION, "envcheck smoke --json", body, defs)


def tables_schema() -> Dict[str, Any]:
    table = {
        "type": "object",
        "properties": {
            "path": STR,
            "builtin": {"type": "boolean"},
            "as_of": STR,
            "age_days": {"type": "integer"},
        },
        "required": ["age_days", "as_of", "builtin", "path"],
        "additionalProperties": True,  # plus a summary of its own per table (counts, ranges)
    }
    props = {
        "schema_version": {},
        "envcheck_version": STR,
        "tables": {"type": "object", "additionalProperties": {"$ref": "#/$defs/TableFile"}},
    }
    body = {
        "type": "object",
        "properties": props,
        "required": sorted(props),
        "additionalProperties": False,
    }
    return _document(
        "tables", TABLES_SCHEMA_VERSION, "envcheck tables --json", body, {"TableFile": table}
    )


# a finding, as Finding.to_dict() writes it: in the report and in compare's document
FINDING: Dict[str, Any] = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "pattern": "^[A-Z]+[0-9]{3}$"},
        "name": STR,
        "severity": {"enum": ["error", "warning", "info"]},
        "title": STR,
        "evidence": STRINGS,
        "fix": STR,
        "command": NULL_STR,
        "caused_by": NULL_STR,
    },
    "required": [
        "caused_by",
        "code",
        "command",
        "evidence",
        "fix",
        "name",
        "severity",
        "title",
    ],
    "additionalProperties": False,
}


def report_schema() -> Dict[str, Any]:
    """report_dict(): check --format json, and diagnose --json with its extra keys."""
    defs: Dict[str, Any] = {"SmokeResult": _smoke_result({})}
    plan = _plan(defs)
    defs["InstallPlan"] = plan
    install = {
        "type": "object",
        "properties": {
            "command": NULL_STR,
            "argv": STRINGS,
            "steps": {"type": "array", "items": STRINGS},
            "manager": STR,
            "fixes": STRINGS,
            "reason": NULL_STR,
            "install_args": STRINGS,
            "plan": {"$ref": "#/$defs/InstallPlan"},
        },
        "additionalProperties": False,
    }
    install["required"] = sorted(install["properties"])
    table_ref = {
        "type": "object",
        "properties": {"as_of": STR, "path": STR, "builtin": {"type": "boolean"}},
        "required": ["as_of", "builtin", "path"],
        "additionalProperties": False,
    }
    props = {
        "schema_version": {},
        "envcheck_version": STR,
        "command": {"enum": ["check", "diagnose", "require"]},
        "verdict": {"enum": ["ready", "not ready", "not judged"]},
        "ready": {"type": "boolean"},
        "unverified": STRINGS,
        "strict": {"type": "boolean"},
        "summary": {
            "type": "object",
            "properties": {
                k: {"type": "integer", "minimum": 0}
                for k in ("error", "warning", "info", "follow_on")
            },
            "required": ["error", "follow_on", "info", "warning"],
            "additionalProperties": False,
        },
        "findings": {"type": "array", "items": {"$ref": "#/$defs/Finding"}},
        "install": {"anyOf": [{"$ref": "#/$defs/Advice"}, {"type": "null"}]},
        "requirements": NULL_STR,  # where the requirements came from: a file, envcheck.require()
        "ignored": STRINGS,
        "ignored_findings": STRINGS,
        "not_run": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"code": STR, "why": STR},
                "required": ["code", "why"],
                "additionalProperties": False,
            },
        },
        "smoke": {"type": "array", "items": {"$ref": "#/$defs/SmokeResult"}},
        "tables": {"type": "object", "additionalProperties": table_ref},
        "facts": {"$ref": "urn:envcheck:schema:facts"},
        # diagnose only
        "read": STRINGS,
        "observed": STRINGS,
        "missing": STRINGS,
        "unstated": STRINGS,
        "errors": STRINGS,
        "command_needs": STRINGS,
        "read_from": {"type": "object", "additionalProperties": STR},
        # facts Facts has no field for: cudnn (as written), package_manager
        "stated": {"type": "object", "additionalProperties": STR},
        "not_judged": STRINGS,
        "notes": STRINGS,
        "messages": STRINGS,
        "error": STR,
    }
    diagnose_only = {
        "read",
        "observed",
        "missing",
        "unstated",
        "errors",
        "command_needs",
        "read_from",
        "stated",
        "not_judged",
        "notes",
        "messages",
        "error",
    }
    body = {
        "type": "object",
        "properties": props,
        "required": sorted(set(props) - diagnose_only),
        "additionalProperties": False,
    }
    defs.update(Finding=FINDING, Advice=install)
    return _document(
        "report",
        REPORT_SCHEMA_VERSION,
        "envcheck report (check --format json, diagnose --json)",
        body,
        defs,
    )


def compare_schema() -> Dict[str, Any]:
    """fleet_document(): compare --json."""
    names = {"type": "array", "items": STR}
    group = {
        "type": "object",
        "properties": {"value": STR, "machines": names},
        "required": ["machines", "value"],
        "additionalProperties": False,
    }
    difference = {
        "type": "object",
        "properties": {
            "fact": STR,
            "code": {"type": "string", "pattern": "^CMP[0-9]{3}$"},
            "majority": NULL_STR,
            "groups": {"type": "array", "items": group},
            "unknown": names,
        },
        "required": ["code", "fact", "groups", "majority", "unknown"],
        "additionalProperties": False,
    }
    unreadable = {
        "type": "object",
        "properties": {"source": STR, "why": STR},
        "required": ["source", "why"],
        "additionalProperties": False,
    }
    props = {
        "schema_version": {},
        "envcheck_version": STR,
        "command": {"const": "compare"},
        "verdict": {"enum": ["COMPATIBLE", "DIFFER", "NOT COMPARED"]},
        "exit_code": {"enum": [0, 1, 2]},
        "machines": names,
        "findings": {"type": "array", "items": {"$ref": "#/$defs/Finding"}},
        "differences": {"type": "array", "items": {"$ref": "#/$defs/Difference"}},
        "not_compared": STRINGS,
        "values": {
            "type": "object",
            "additionalProperties": {"type": "object", "additionalProperties": STR},
        },
        "unreadable": {"type": "array", "items": unreadable},
        "notes": STRINGS,
    }
    body = {
        "type": "object",
        "properties": props,
        "required": sorted(props),
        "additionalProperties": False,
    }
    defs = {"Finding": FINDING, "Difference": difference}
    return _document("compare", FLEET_SCHEMA_VERSION, "envcheck compare --json", body, defs)


def ranks_schema() -> Dict[str, Any]:
    """ranks_document(): smoke --distributed --json, on rank 0."""
    record = {
        "type": "object",
        "properties": {
            "rank": {"type": "integer", "minimum": 0},
            "node": {"type": "integer", "minimum": 0},
            "local_rank": {"type": "integer", "minimum": 0},
            "host": STR,
            "device": STR,
            "gpu": NULL_STR,
        },
        "required": ["device", "host", "local_rank", "node", "rank"],
        "additionalProperties": True,  # the workloads' figures and errors, per rank
    }
    props = {
        "schema_version": {},
        "envcheck_version": STR,
        "passed": {"type": "boolean"},
        "exit_code": {"enum": [0, 1, 3]},
        "world_size": {"type": "integer", "minimum": 1},
        "missing": {"type": "array", "items": {"type": "integer"}},
        "ranks": {"type": "array", "items": {"$ref": "#/$defs/Rank"}},
        "compared": {"anyOf": [{"$ref": "urn:envcheck:schema:compare"}, {"type": "null"}]},
    }
    body = {
        "type": "object",
        "properties": props,
        "required": sorted(props),
        "additionalProperties": False,
    }
    defs = {"Rank": record}
    return _document(
        "ranks", RANKS_SCHEMA_VERSION, "envcheck smoke --distributed --json", body, defs
    )


def _closed(props: Dict[str, Any], optional: Tuple[str, ...] = ()) -> Dict[str, Any]:
    return {
        "type": "object",
        "properties": props,
        "required": sorted(k for k in props if k not in optional),
        "additionalProperties": False,
    }


def scan_schema() -> Dict[str, Any]:
    """`envcheck scan --format json` (envcheck/report/scan_text.py, scan_dict)."""
    integer = {"type": "integer"}
    change = _closed(
        {
            "id": STR,
            "release": STR,
            "torch": STR,
            "kind": {"enum": ["removed", "changed", "deprecated"]},
            "breaks": {"type": "boolean"},
            "matches": STR,
            "what": STR,
            "fix": STR,
            "sources": STRINGS,
            "uses": integer,
        }
    )
    use = _closed({"change": STR, "file": STR, "line": integer, "column": integer, "text": STR})
    props = {
        "schema_version": {},
        "envcheck_version": STR,
        "root": STR,
        "torch": STR,
        "torch_from": STR,
        "since": NULL_STR,
        "table": _closed({"path": STR, "as_of": STR, "covers": STR}),
        "unknown": NULL_STR,
        "files": _closed({"python": integer, "cpp": integer, "script": integer}),
        "changes_checked": integer,
        "summary": STR,
        "exit_code": {"enum": [0, 1]},
        "changes": {"type": "array", "items": {"$ref": "#/$defs/Change"}},
        "uses": {"type": "array", "items": {"$ref": "#/$defs/Use"}},
        "truncated": {"type": "boolean"},
        "skipped": {"type": "array", "items": _closed({"path": STR, "why": STR})},
    }
    return _document(
        "scan",
        SCAN_SCHEMA_VERSION,
        "envcheck scan --format json",
        _closed(props),
        {"Change": change, "Use": use},
    )


SCHEMAS = {
    "compare": compare_schema,
    "ranks": ranks_schema,
    "facts": facts_schema,
    "report": report_schema,
    "plan": plan_schema,
    "smoke": smoke_schema,
    "tables": tables_schema,
    "scan": scan_schema,
}


def render_all() -> Dict[str, str]:
    return {
        f"{name}.schema.json": json.dumps(fn(), indent=2) + "\n" for name, fn in SCHEMAS.items()
    }


def main(argv: List[str]) -> int:
    files = render_all()
    if "--check" in argv:
        stale = [
            n
            for n, text in files.items()
            if not (OUT / n).exists() or (OUT / n).read_text() != text
        ]
        for name in stale:
            print(f"docs/schema/{name} differs from the code: run python tools/json_schemas.py")
        return 1 if stale else 0
    OUT.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (OUT / name).write_text(text)
        print(f"wrote docs/schema/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
