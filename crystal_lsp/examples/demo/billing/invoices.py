"""Invoice totals for the billing service."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal


@dataclass
class Line:
    sku: str
    quantity: int
    unit_price: Decimal
    discount: Decimal = Decimal("0")


def invoice_total(lines: list[Line], tax_rate: Decimal) -> Decimal:
    """Sum the lines, apply per-line discounts, then tax, rounded to cents."""
    subtotal = Decimal("0")
    for line in lines:
        if line.quantity <= 0:
            raise ValueError(f"bad quantity for {line.sku}: {line.quantity}")
        gross = line.unit_price * line.quantity
        subtotal += gross - gross * line.discount
    taxed = subtotal * (1 + tax_rate)
    return taxed.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def overdue_invoices(invoices: list[dict[str, object]], today: int) -> list[str]:
    """Ids of unpaid invoices whose due day is before today, oldest first."""
    late = [inv for inv in invoices if not inv["paid"] and int(inv["due"]) < today]  # type: ignore[call-overload]
    late.sort(key=lambda inv: int(inv["due"]))  # type: ignore[call-overload]
    return [str(inv["id"]) for inv in late]
