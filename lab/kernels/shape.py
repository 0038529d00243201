"""The problem an attention kernel solves: (B, H, S, D) and whether it is causal.

The one home for a shape's text forms: parsing `B,H,S,D` / `B,H,S,D,causal` (the command line,
the manifest's `judged_at`, the notebooks) and writing it back, as an id, a label or a spec.

    >>> s = Shape.parse("4,16,4096,64,causal")
    >>> s.id, str(s), s.tuple_label, s.spec
    ('B4-H16-S4096-D64-causal', '(4, 16, 4096, 64) causal', '(4, 16, 4096, 64, causal)', '4,16,4096,64,causal')
"""

from __future__ import annotations

from dataclasses import dataclass

FORM = "B,H,S,D or B,H,S,D,causal (the word)"


@dataclass(frozen=True)
class Shape:
    B: int
    H: int
    S: int
    D: int
    causal: bool

    @property
    def id(self) -> str:
        """'B4-H16-S4096-D64-full': a file-name-safe key (shapes.json, ncu file names)."""
        return f"B{self.B}-H{self.H}-S{self.S}-D{self.D}-{'causal' if self.causal else 'full'}"

    def __str__(self) -> str:
        return f"({self.B}, {self.H}, {self.S}, {self.D}) {'causal' if self.causal else 'non-causal'}"

    @property
    def tuple_label(self) -> str:
        """'(4, 16, 4096, 64)' or '(4, 16, 4096, 64, causal)'."""
        return f"({self.B}, {self.H}, {self.S}, {self.D}{', causal' if self.causal else ''})"

    @property
    def spec(self) -> str:
        """'4,16,4096,64' or '4,16,4096,64,causal': the form `parse` reads."""
        return f"{self.B},{self.H},{self.S},{self.D}" + (",causal" if self.causal else "")

    @property
    def dims(self) -> tuple[int, int, int, int]:
        return self.B, self.H, self.S, self.D

    def astuple(self) -> tuple[int, int, int, int, bool]:
        """(B, H, S, D, causal), as run records store a shape."""
        return self.B, self.H, self.S, self.D, self.causal

    @classmethod
    def of(cls, value) -> "Shape":
        """A Shape from a Shape, a (B, H, S, D[, causal]) sequence (a run record's list) or a spec."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            return cls.parse(value)
        parts = tuple(value)
        return cls(*(int(p) for p in parts[:4]), causal=bool(parts[4]) if len(parts) > 4 else False)

    @classmethod
    def parse(cls, text: str) -> "Shape":
        """'B,H,S,D' or 'B,H,S,D,causal'; anything else raises a ValueError naming the form."""
        parts = [p.strip() for p in str(text).split(",") if p.strip()]
        if len(parts) not in (4, 5) or not all(p.isdigit() for p in parts[:4]) or (
                len(parts) == 5 and parts[4] != "causal"):
            raise ValueError(f"shape {text!r}: expected {FORM}")
        return cls(*(int(p) for p in parts[:4]), causal=len(parts) == 5)


def is_spec(text: str) -> bool:
    """Whether `text` is a shape `Shape.parse` reads."""
    try:
        Shape.parse(text)
    except ValueError:
        return False
    return True
