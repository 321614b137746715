import { describe, expect, it } from "vitest";
import { addressKey } from "../../src/rate-limits/client-address";

describe("rate-limit keys of client addresses", () => {
  it("IPv4 addresses count one by one", () => {
    expect(addressKey("203.0.113.7")).toBe("203.0.113.7");
  });

  it("IPv6 addresses count by their /64, however they are written", () => {
    const key = "2001:db8:85a3:8d3::/64";
    for (const address of [
      "2001:db8:85a3:8d3:1319:8a2e:370:7348",
      "2001:0db8:85a3:08d3:ffff:ffff:ffff:ffff",
      "2001:DB8:85A3:8D3::1",
      "2001:db8:85a3:8d3::",
      "2001:db8:85a3:8d3::1%eth0",
    ]) {
      expect(addressKey(address), address).toBe(key);
    }
    expect(addressKey("2001:db8:85a3:8d4::1")).not.toBe(key);
    expect(addressKey("::1")).toBe("0:0:0:0::/64");
  });

  it("IPv4-mapped IPv6 is the IPv4 address; anything unparsable is its own key", () => {
    expect(addressKey("::ffff:192.0.2.1")).toBe("192.0.2.1");
    expect(addressKey("not:an:address:::")).toBe("not:an:address:::");
    expect(addressKey("unknown")).toBe("unknown");
  });
});
