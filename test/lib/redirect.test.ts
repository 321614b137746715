import { describe, expect, it } from "vitest";
import { isRedirectAllowed, matchesAllowedUrl, withQuery } from "../../src/lib/redirect";

describe("redirect allow-list", () => {
  it("allows the entry itself and its sub-paths, not look-alike paths", () => {
    expect(matchesAllowedUrl("https://app.example.com/cb", "https://app.example.com/cb")).toBe(true);
    expect(matchesAllowedUrl("https://app.example.com/cb/deep?x=1", "https://app.example.com/cb")).toBe(true);
    expect(matchesAllowedUrl("https://app.example.com/cbx", "https://app.example.com/cb")).toBe(false);
    expect(matchesAllowedUrl("https://app.example.com/anything", "https://app.example.com")).toBe(true);
  });

  it("matches * against exactly one DNS label", () => {
    expect(matchesAllowedUrl("https://a.example.com/", "https://*.example.com")).toBe(true);
    expect(matchesAllowedUrl("https://a.b.example.com/", "https://*.example.com")).toBe(false);
    expect(matchesAllowedUrl("https://example.com/", "https://*.example.com")).toBe(false);
    expect(matchesAllowedUrl("https://evil.com/?.example.com", "https://*.example.com")).toBe(false);
  });

  it("compares scheme, host and port, with default ports normalised", () => {
    expect(matchesAllowedUrl("https://example.com:443/x", "https://example.com")).toBe(true);
    expect(matchesAllowedUrl("https://example.com:8443/x", "https://example.com")).toBe(false);
    expect(matchesAllowedUrl("http://example.com/x", "https://example.com")).toBe(false);
    expect(matchesAllowedUrl("https://example.com.evil.com/", "https://example.com")).toBe(false);
  });

  it("allows custom app schemes", () => {
    expect(matchesAllowedUrl("myapp://callback/done", "myapp://callback")).toBe(true);
    expect(matchesAllowedUrl("otherapp://callback", "myapp://callback")).toBe(false);
  });

  it("refuses scheme-relative, javascript:, userinfo and unparsable targets", () => {
    const client = "https://app.example.com";
    expect(isRedirectAllowed("//app.example.com/x", client, [])).toBe(false);
    expect(isRedirectAllowed("javascript:alert(1)", client, ["javascript:alert(1)"])).toBe(false);
    expect(isRedirectAllowed("https://evil.com@app.example.com/", client, [])).toBe(false);
    expect(isRedirectAllowed("https:\\\\evil.com", client, [])).toBe(false);
    expect(isRedirectAllowed("not a url", client, [])).toBe(false);
    expect(isRedirectAllowed("https://app.example.com/ok", client, [])).toBe(true);
  });

  it("adds parameters to a target and keeps its own query", () => {
    expect(withQuery("https://a.example/cb?x=1", { refreshToken: "t", type: "emailVerify" })).toBe(
      "https://a.example/cb?x=1&refreshToken=t&type=emailVerify",
    );
  });
});
