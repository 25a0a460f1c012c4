"""Basis points as the posts define them: "Performance changes by one basis point when the
difference in rQPS is 0.01. When rQPS decreases from 0.95 to 0.85 then it changed by 10 basis
points." (BP_DEFINITION). How every write-up and words line sizes a change. Pure."""
from __future__ import annotations


BP_DEFINITION = "1 basis point (bp) = a change of 0.01 in rQPS (0.95 to 0.85 is a drop of 10 basis points)"


def bp_change(ratio: float) -> float:
    """The change of rQPS `ratio` from 1 in basis points: 0.62 -> -38.0, 1.10 -> +10.0."""
    return (ratio - 1) * 100


def amount(ratio: float) -> str:
    """`38`, `8.5`: whole basis points from 10 on, a tenth below (a 2% change is 2 bp)."""
    size = abs(bp_change(ratio))
    text = f"{size:.0f}" if size >= 10 else f"{size:.1f}"
    return text[:-2] if text.endswith(".0") else text


def bp(ratio: float) -> str:
    """`-8.5 bp`: a ratio's change in basis points, signed."""
    size = amount(ratio)
    return f"{'-' if ratio < 1 and size != '0' else '+'}{size} bp"
