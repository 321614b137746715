// Phone numbers for tests. A lane's files share one database, and the directory keeps a number for one account: a
// number drawn from a few thousand (the old `+1415555xxxx` of each file) met one another file had signed up before it
// often enough to fail a run now and then (a 422 `phone_exists` where a change was asked). Drawn from ten area codes,
// every exchange but the N11 ones and every line, there are some 72 million.

const AREAS = ["415", "212", "312", "617", "206", "303", "404", "512", "702", "808"];

const digits = (count: number, from = 0) =>
  String(from + Math.floor(Math.random() * (10 ** count - from))).padStart(count, "0");

/** A fresh, valid US number in E.164 (`+1` + area + exchange + line). */
export function uniquePhone(): string {
  const area = AREAS[Math.floor(Math.random() * AREAS.length)]!;
  let exchange = digits(3, 200);
  while (exchange.endsWith("11")) exchange = digits(3, 200);
  return `+1${area}${exchange}${digits(4)}`;
}
