// SMS sign-in driven by the real @nhost/nhost-js client against `wrangler dev`, the code read from the development
// SMS list as a person would read their phone.
import { describe, expect, it } from "vitest";
import { authUrl, client, rejection } from "./client";

describe("@nhost/nhost-js SMS sign-in", () => {
  it("texts a code that signs in and the client stores the session", async () => {
    const nhost = client();
    const phoneNumber = `+1415555${String(Math.floor(Math.random() * 10_000)).padStart(4, "0")}`;
    expect((await nhost.auth.signInPasswordlessSms({ phoneNumber })).body).toBe("OK");
    const texts = (await (
      await fetch(`${authUrl}/dev/sms?to=${encodeURIComponent(phoneNumber)}`)
    ).json()) as {
      body: string;
    }[];
    const otp = /\b(\d{6})\b/.exec(texts[0]!.body)![1]!;

    const wrong = await rejection(
      nhost.auth.verifySignInPasswordlessSms({ phoneNumber, otp: otp === "000000" ? "111111" : "000000" }),
    );
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe("invalid-otp");

    const signedIn = await nhost.auth.verifySignInPasswordlessSms({ phoneNumber, otp });
    expect(signedIn.body.session?.user?.phoneNumber).toBe(phoneNumber);
    expect(nhost.getUserSession()?.user?.phoneNumberVerified).toBe(true);
    expect((await nhost.auth.getUser()).body.phoneNumber).toBe(phoneNumber);
  });

  it("signUpPasswordlessSms creates the account and texts a code; a number with an account is 409", async () => {
    const nhost = client();
    const phoneNumber = `+1415555${String(Math.floor(Math.random() * 10_000)).padStart(4, "0")}`;
    const signUp = await nhost.auth.signUpPasswordlessSms({ phoneNumber, options: { displayName: "Sam" } });
    expect(signUp.body).toBe("OK");
    const texts = (await (
      await fetch(`${authUrl}/dev/sms?to=${encodeURIComponent(phoneNumber)}`)
    ).json()) as {
      body: string;
    }[];
    const otp = /\b(\d{6})\b/.exec(texts[0]!.body)![1]!;
    const signedIn = await nhost.auth.verifySignInPasswordlessSms({ phoneNumber, otp });
    expect(signedIn.body.session?.user?.displayName).toBe("Sam");

    const taken = await rejection(nhost.auth.signUpPasswordlessSms({ phoneNumber }));
    expect(taken.status).toBe(409);
    expect(taken.body.error).toBe("phone-number-already-in-use");
  });
});
