"""An operator's own classifier (an LLM guard, a fine-tuned model) as a second opinion.

Off by default. A :class:`Classifier` is any callable ``(text, field) -> Verdict | None``,
sync or async; :class:`HttpClassifier` POSTs ``{"text": ..., "field": ...}`` to an endpoint
that answers ``{"flagged": true, "reason": "...", "severity": "high"}`` (or
``{"score": 0.93}``, flagged at ``threshold``). A classifier that fails or times out adds
nothing (the rules' verdict stands) and is logged: a guard that is down must not take every
tool call down with it.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .findings import Finding, trim

if TYPE_CHECKING:
    import httpx

__all__ = ["Classifier", "HttpClassifier", "Verdict", "classify"]

log = logging.getLogger("toolscout.security")


@dataclass(frozen=True, slots=True)
class Verdict:
    """A classifier's answer: flagged or not, and why."""

    flagged: bool
    reason: str = ""
    severity: str = "medium"


Classifier = Callable[[str, str], "Verdict | Awaitable[Verdict | None] | None"]


async def classify(classifier: Classifier, text: str, field: str) -> list[Finding]:
    """The classifier's verdict on ``text`` as findings (``classifier_flag``), or none."""
    try:
        verdict = classifier(text, field)
        if inspect.isawaitable(verdict):
            verdict = await verdict
    except Exception as exc:  # an operator's code or service: any failure means "no opinion"
        log.warning("poisoning classifier failed on %s: %s", field, exc)
        return []
    if not isinstance(verdict, Verdict) or not verdict.flagged:
        return []
    severity = verdict.severity if verdict.severity in ("high", "medium") else "medium"
    return [Finding("classifier_flag", severity, field, trim(verdict.reason or text))]  # type: ignore[arg-type]


class HttpClassifier:
    """POST each text to ``url``; see the module docstring for the two answers it reads."""

    def __init__(self, url: str, *, timeout: float = 2.0, threshold: float = 0.5, headers: dict[str, str] | None = None) -> None:
        import httpx  # on first use: httpx loads rich, which the serve path never needs

        self.url = url
        self.threshold = threshold
        self._client: httpx.AsyncClient = httpx.AsyncClient(timeout=timeout, headers=headers)

    async def __call__(self, text: str, field: str) -> Verdict | None:
        response = await self._client.post(self.url, json={"text": text, "field": field})
        response.raise_for_status()
        body: Any = response.json()
        if not isinstance(body, dict):
            return None
        if "flagged" in body:
            flagged = bool(body["flagged"])
        else:
            score = body.get("score")
            flagged = isinstance(score, int | float) and score >= self.threshold
        return Verdict(flagged, str(body.get("reason") or ""), str(body.get("severity") or "medium"))

    async def aclose(self) -> None:
        await self._client.aclose()
