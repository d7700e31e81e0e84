import { describe, expect, it } from "vitest";
import { addressKey, addressKeyer } from "../../src/http/guards/ip-address.js";

// The per-endpoint keyer remembers recent addresses' keys (a keep-alive client sends many requests
// from one address): it must answer exactly what addressKey does, however many addresses it met.
describe("addressKeyer", () => {
  const addresses = [
    "198.51.100.7",
    "::ffff:198.51.100.7",
    "2001:db8:1:2:3:4:5:6",
    "2001:db8:1:2::9",
    "::1",
    "fe80::1%eth0",
    "not an address",
  ];

  it("should key each address as addressKey does, after its label", () => {
    const keyOf = addressKeyer(64, "a:");
    for (const address of addresses) {
      expect(keyOf(address)).toBe(`a:${addressKey(address, 64)}`);
      expect(keyOf(address)).toBe(`a:${addressKey(address, 64)}`);
    }
    expect(keyOf("2001:db8:1:2:3:4:5:6")).toBe(keyOf("2001:db8:1:2::9"));
    expect(keyOf("::ffff:198.51.100.7")).toBe("a:198.51.100.7");
  });

  it("should stay right past the number of addresses it remembers", () => {
    const keyOf = addressKeyer(48);
    for (let i = 0; i < 10_000; i++) {
      const address =
        i % 2 === 0
          ? `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
          : `2001:db8:${i.toString(16)}::1`;
      expect(keyOf(address)).toBe(addressKey(address, 48));
    }
    for (const address of addresses) expect(keyOf(address)).toBe(addressKey(address, 48));
  });
});
