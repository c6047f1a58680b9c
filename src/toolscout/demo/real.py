"""The demo tools that really run: math, units, date/time and text utilities (offline, exact)."""

from __future__ import annotations

import ast
import base64
import binascii
import hashlib
import math
import operator
import re
import statistics
import unicodedata
from collections.abc import Callable
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["REAL_HANDLERS", "evaluate"]

# -- math ------------------------------------------------------------------------------
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCS: dict[str, Callable[..., Any]] = {
    "sqrt": math.sqrt, "log": math.log, "log10": math.log10, "log2": math.log2, "exp": math.exp,
    "sin": math.sin, "cos": math.cos, "tan": math.tan, "asin": math.asin, "acos": math.acos,
    "atan": math.atan, "abs": abs, "round": round, "floor": math.floor, "ceil": math.ceil,
    "factorial": math.factorial, "min": min, "max": max,
}
_CONSTS = {"pi": math.pi, "e": math.e, "tau": math.tau}


def evaluate(expression: str) -> float | int:
    """Arithmetic over a parsed AST (never ``eval``): numbers, operators, whitelisted calls."""
    tree = ast.parse(expression.replace("^", "**"), mode="eval")
    return _eval(tree.body)


def _eval(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.Name) and node.id in _CONSTS:
        return _CONSTS[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and (
            abs(right) > 1000 or (isinstance(left, int) and left.bit_length() * abs(right) > 100_000)
        ):
            raise ValueError("result too large: exponent out of range")
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS:
        if node.func.id == "factorial" and _eval(node.args[0]) > 1000:
            raise ValueError("factorial argument too large")
        return _FUNCS[node.func.id](*(_eval(a) for a in node.args))
    raise ValueError(f"unsupported expression element: {ast.unparse(node)!r}")


def _math_evaluate(args: dict[str, Any]) -> dict[str, Any]:
    try:
        value = evaluate(args["expression"])
    except (SyntaxError, ZeroDivisionError, OverflowError) as exc:
        raise ValueError(f"cannot evaluate {args['expression']!r}: {exc}") from exc
    return {"expression": args["expression"], "result": value}


def _math_statistics(args: dict[str, Any]) -> dict[str, Any]:
    values = args["values"]
    return {
        "count": len(values), "sum": math.fsum(values), "mean": statistics.fmean(values),
        "median": statistics.median(values),
        "stdev": statistics.stdev(values) if len(values) > 1 else 0.0,
        "min": min(values), "max": max(values),
    }


def _math_percentage_change(args: dict[str, Any]) -> dict[str, Any]:
    old, new = args["old"], args["new"]
    if old == 0:
        raise ValueError("the starting value is 0: a percentage change is undefined")
    return {"old": old, "new": new, "change_percent": round((new - old) / abs(old) * 100, 6)}


def _math_loan_payment(args: dict[str, Any]) -> dict[str, Any]:
    principal, months = args["principal"], round(args["years"] * 12)
    rate = args["annual_rate_percent"] / 100 / 12
    payment = principal / months if rate == 0 else principal * rate / (1 - (1 + rate) ** -months)
    return {"monthly_payment": round(payment, 2), "months": months,
            "total_interest": round(payment * months - principal, 2)}


# -- units -----------------------------------------------------------------------------
# unit -> (dimension, factor to the dimension's base unit)
_UNITS: dict[str, tuple[str, float]] = {
    "mm": ("length", 0.001), "cm": ("length", 0.01), "m": ("length", 1.0), "km": ("length", 1000.0),
    "in": ("length", 0.0254), "ft": ("length", 0.3048), "yd": ("length", 0.9144), "mi": ("length", 1609.344),
    "nmi": ("length", 1852.0),
    "mg": ("mass", 1e-6), "g": ("mass", 0.001), "kg": ("mass", 1.0), "t": ("mass", 1000.0),
    "oz": ("mass", 0.028349523125), "lb": ("mass", 0.45359237), "st": ("mass", 6.35029318),
    "ml": ("volume", 0.001), "l": ("volume", 1.0), "m3": ("volume", 1000.0),
    "tsp": ("volume", 0.00492892159375), "tbsp": ("volume", 0.01478676478125),
    "cup": ("volume", 0.2365882365), "floz": ("volume", 0.0295735295625),
    "pt": ("volume", 0.473176473), "qt": ("volume", 0.946352946), "gal": ("volume", 3.785411784),
    "m/s": ("speed", 1.0), "km/h": ("speed", 1 / 3.6), "mph": ("speed", 0.44704), "kn": ("speed", 0.514444),
    "m2": ("area", 1.0), "km2": ("area", 1e6), "ha": ("area", 1e4), "acre": ("area", 4046.8564224),
    "ft2": ("area", 0.09290304),
    "b": ("data", 1.0), "kb": ("data", 1e3), "mb": ("data", 1e6), "gb": ("data", 1e9), "tb": ("data", 1e12),
    "kib": ("data", 1024.0), "mib": ("data", 1024.0**2), "gib": ("data", 1024.0**3),
    "s": ("time", 1.0), "min": ("time", 60.0), "h": ("time", 3600.0), "day": ("time", 86400.0),
    "week": ("time", 604800.0),
}
_ALIASES = {
    "meter": "m", "metre": "m", "meters": "m", "kilometer": "km", "kilometers": "km", "mile": "mi",
    "miles": "mi", "foot": "ft", "feet": "ft", "inch": "in", "inches": "in", "kilogram": "kg",
    "kilograms": "kg", "kgs": "kg", "pound": "lb", "pounds": "lb", "lbs": "lb", "ounce": "oz",
    "gram": "g", "grams": "g", "liter": "l", "litre": "l", "liters": "l", "gallon": "gal",
    "gallons": "gal", "kph": "km/h", "kmh": "km/h", "hour": "h", "hours": "h", "minute": "min",
    "minutes": "min", "second": "s", "seconds": "s", "days": "day", "weeks": "week",
    "celsius": "c", "fahrenheit": "f", "kelvin": "k", "°c": "c", "°f": "f",
}
_TEMPERATURE = {  # to and from kelvin
    "c": (lambda v: v + 273.15, lambda k: k - 273.15),
    "f": (lambda v: (v - 32) * 5 / 9 + 273.15, lambda k: (k - 273.15) * 9 / 5 + 32),
    "k": (lambda v: v, lambda k: k),
}


def _unit(name: str) -> str:
    key = name.strip().lower()
    return _ALIASES.get(key, key)


def _units_convert(args: dict[str, Any]) -> dict[str, Any]:
    value, src, dst = args["value"], _unit(args["from_unit"]), _unit(args["to_unit"])
    if src in _TEMPERATURE and dst in _TEMPERATURE:
        result = _TEMPERATURE[dst][1](_TEMPERATURE[src][0](value))
    else:
        for u in (src, dst):
            if u not in _UNITS:
                raise ValueError(f"unknown unit {u!r}; call units_list_units for the known ones")
        (dim_a, fa), (dim_b, fb) = _UNITS[src], _UNITS[dst]
        if dim_a != dim_b:
            raise ValueError(f"cannot convert {dim_a} ({src}) to {dim_b} ({dst})")
        result = value * fa / fb
    return {"value": value, "from_unit": args["from_unit"], "to_unit": args["to_unit"],
            "result": round(result, 10)}


def _units_list(_: dict[str, Any]) -> dict[str, Any]:
    groups: dict[str, list[str]] = {"temperature": ["C", "F", "K"]}
    for unit, (dim, _factor) in _UNITS.items():
        groups.setdefault(dim, []).append(unit)
    return groups


# -- time ------------------------------------------------------------------------------
def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown time zone {name!r}; use an IANA name such as Europe/Paris") from exc


def _describe(moment: datetime) -> dict[str, Any]:
    return {"datetime": moment.isoformat(timespec="seconds"), "weekday": moment.strftime("%A"),
            "utc_offset": moment.strftime("%z"), "timezone": str(moment.tzinfo)}


def _time_now(args: dict[str, Any]) -> dict[str, Any]:
    return _describe(datetime.now(_zone(args.get("timezone") or "UTC")))


def _time_convert(args: dict[str, Any]) -> dict[str, Any]:
    local = datetime.fromisoformat(args["datetime"]).replace(tzinfo=_zone(args["from_timezone"]))
    return {"from": _describe(local), "to": _describe(local.astimezone(_zone(args["to_timezone"])))}


def _time_difference(args: dict[str, Any]) -> dict[str, Any]:
    days = (date.fromisoformat(args["end"]) - date.fromisoformat(args["start"])).days
    weeks, rest = divmod(abs(days), 7)
    return {"days": days, "weeks": weeks if days >= 0 else -weeks, "extra_days": rest}


def _time_add(args: dict[str, Any]) -> dict[str, Any]:
    start = datetime.fromisoformat(args["datetime"])
    delta = timedelta(days=args.get("days", 0), hours=args.get("hours", 0), minutes=args.get("minutes", 0))
    end = start + delta
    return {"start": start.isoformat(), "result": end.isoformat(), "weekday": end.strftime("%A")}


# -- text ------------------------------------------------------------------------------
def _word_count(args: dict[str, Any]) -> dict[str, Any]:
    text = args["text"]
    words = len(text.split())
    return {"words": words, "characters": len(text), "lines": len(text.splitlines()) or (1 if text else 0),
            "sentences": len([s for s in re.split(r"[.!?。！？]+", text) if s.strip()]),
            "reading_minutes": round(words / 230, 1)}


def _slugify(args: dict[str, Any]) -> dict[str, Any]:
    ascii_text = unicodedata.normalize("NFKD", args["text"]).encode("ascii", "ignore").decode()
    return {"slug": re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")}


def _hash(args: dict[str, Any]) -> dict[str, Any]:
    algorithm = args.get("algorithm", "sha256")
    return {"algorithm": algorithm, "hexdigest": hashlib.new(algorithm, args["text"].encode()).hexdigest()}


def _b64_encode(args: dict[str, Any]) -> dict[str, Any]:
    return {"base64": base64.b64encode(args["text"].encode()).decode()}


def _b64_decode(args: dict[str, Any]) -> dict[str, Any]:
    try:
        return {"text": base64.b64decode(args["data"], validate=True).decode()}
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise ValueError(f"not base64-encoded UTF-8 text: {exc}") from exc


def _extract_emails(args: dict[str, Any]) -> dict[str, Any]:
    found = re.findall(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", args["text"])
    return {"emails": list(dict.fromkeys(found))}


REAL_HANDLERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "math_evaluate": _math_evaluate,
    "math_statistics": _math_statistics,
    "math_percentage_change": _math_percentage_change,
    "math_loan_payment": _math_loan_payment,
    "units_convert": _units_convert,
    "units_list_units": _units_list,
    "time_now": _time_now,
    "time_convert_timezone": _time_convert,
    "time_date_difference": _time_difference,
    "time_add_duration": _time_add,
    "text_word_count": _word_count,
    "text_slugify": _slugify,
    "text_hash": _hash,
    "text_base64_encode": _b64_encode,
    "text_base64_decode": _b64_decode,
    "text_extract_emails": _extract_emails,
}
