// What tells one device from another when no cookie comes back (src/auth/devices/): the browser family and system from
// the User-Agent, and the network of the address.
// Threats: a key that changes with every browser update (a notice each month for every nhost-js user), or one so
// wide that every device of a kind is "known"; a User-Agent that puts its own words into our mail.
import { describe, expect, it } from "vitest";
import { networkOf } from "../../../src/auth/devices/device-keys";
import { deviceNameOf } from "../../../src/auth/devices/device-name";

describe("deviceNameOf", () => {
  it.each([
    [
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
      "Chrome",
      "macOS",
    ],
    [
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
      "Edge",
      "Windows",
    ],
    ["Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0", "Firefox", "Linux"],
    [
      "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
      "Safari",
      "iOS",
    ],
    [
      "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36",
      "Samsung Internet",
      "Android",
    ],
    [
      "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
      "Chrome",
      "ChromeOS",
    ],
    ["node", "Node.js", null],
    ["curl/8.7.1", "curl", null],
  ])("%s → %s on %s", (userAgent, browser, system) => {
    expect(deviceNameOf(userAgent)).toEqual({ browser, system });
  });

  it("knows nothing of a missing or foreign User-Agent, and never echoes it", () => {
    expect(deviceNameOf(undefined)).toEqual({ browser: null, system: null });
    expect(deviceNameOf("All is fine, see https://evil.example")).toEqual({ browser: null, system: null });
  });

  it("is the same across versions of one browser", () => {
    const v = (n: number) =>
      `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${n}.0.0.0 Safari/537.36`;
    expect(deviceNameOf(v(120))).toEqual(deviceNameOf(v(131)));
  });
});

describe("networkOf", () => {
  it.each([
    ["198.51.100.17", "198.51.100.0/24"],
    ["2001:db8:aa:bb::1", "2001:db8:aa::/48"],
    ["2001:DB8:aa:cc:1:2:3:4", "2001:db8:aa::/48"],
    ["::ffff:198.51.100.17", "198.51.100.0/24"],
    ["", ""],
    [null, ""],
    ["not an address", "not an address"],
  ])("%s → %s", (address, network) => {
    expect(networkOf(address)).toBe(network);
  });
});
