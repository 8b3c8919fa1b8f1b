// Shopping cart helpers for the web shop.
export function cartTotal(items, taxRate) {
  let subtotal = 0;
  for (const item of items) {
    if (item.quantity <= 0) {
      throw new Error(`bad quantity for ${item.sku}`);
    }
    subtotal += item.price * item.quantity * (1 - item.discount);
  }
  return Math.round(subtotal * (1 + taxRate) * 100) / 100;
}

export function formatPrice(cents, currency) {
  const units = Math.floor(cents / 100);
  const rest = String(cents % 100).padStart(2, "0");
  return `${currency} ${units}.${rest}`;
}
