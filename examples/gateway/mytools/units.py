"""The ``units`` Python source of servers.json: a list of functions, each one a tool."""

from __future__ import annotations


def celsius_to_fahrenheit(celsius: float) -> float:
    """Convert a temperature from degrees Celsius to degrees Fahrenheit."""
    return celsius * 9 / 5 + 32


def km_to_miles(km: float) -> float:
    """Convert a distance from kilometres to miles."""
    return km / 1.609344


tools = [celsius_to_fahrenheit, km_to_miles]
