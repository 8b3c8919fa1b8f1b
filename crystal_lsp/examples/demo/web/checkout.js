// Checkout page logic.
import { formatPrice } from "./cart.js";

export function orderTotal(lines, vat) {
  let sum = 0;
  for (const line of lines) {
    if (line.quantity <= 0) {
      throw new Error(`bad quantity for ${line.sku}`);
    }
    sum += line.price * line.quantity * (1 - line.discount);
  }
  return Math.round(sum * (1 + vat) * 100) / 100;
}

export function receipt(order) {
  const total = orderTotal(order.lines, order.vat);
  return `Order ${order.id}: ${formatPrice(Math.round(total * 100), order.currency)}`;
}
