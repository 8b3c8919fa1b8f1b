"""Stock valuation for the inventory service."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal


def stock_value(items: list, vat: Decimal) -> Decimal:
    """Value of the stock on hand including VAT (copied from billing, then renamed)."""
    running = Decimal("0")
    for item in items:
        if item.quantity <= 0:
            raise ValueError(f"bad quantity for {item.sku}: {item.quantity}")
        worth = item.unit_price * item.quantity
        running += worth - worth * item.discount
    with_vat = running * (1 + vat)
    return with_vat.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def reorder_list(levels: dict[str, int], minimum: dict[str, int]) -> list[str]:
    """SKUs below their minimum stock level, most urgent first."""
    short = {
        sku: minimum[sku] - level for sku, level in levels.items() if level < minimum.get(sku, 0)
    }
    return sorted(short, key=lambda sku: (-short[sku], sku))


def late_shipments(shipments: list[dict[str, object]], today: int) -> list[str]:
    """Ids of undelivered shipments whose due day has passed, oldest first."""
    late = [s for s in shipments if not s["delivered"] and int(s["due"]) < today]  # type: ignore[call-overload]
    late.sort(key=lambda s: int(s["due"]))  # type: ignore[call-overload]
    for s in late:
        s["flagged"] = True
    return [str(s["id"]) for s in late]
