import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type * as oidc from "openid-client";
import { z } from "zod";
import { type Approval, askApproval } from "./approval";

/**
 * An MCP server with one tool that must not run on the model's say-so alone: `pay` asks the user (by OpenID CIBA,
 * through the auth service) and pays only once they approved on their own device. The payment itself is a stand-in
 * (a list in memory): put the real call where `payments.push` is.
 */

export interface Payment {
  amount: number;
  currency: string;
  payee: string;
  /** The user who approved it: the `sub` of the ID token the approval gave. */
  approvedBy: string;
}

export interface PayServerOptions {
  /** openid-client's configuration of the CIBA client (approval.ts `approvalClient`). */
  client: oidc.Configuration;
  /** Who is asked: the email address or user id of the person this server acts for. */
  user: string;
  /** Seconds the user has to answer (10–1800). */
  expiresIn?: number;
}

const refusal = (approval: Exclude<Approval, { approved: true }>) => ({
  isError: true,
  content: [
    {
      type: "text" as const,
      text:
        approval.reason === "denied"
          ? "The user denied the payment. Nothing was paid."
          : "The user did not answer in time. Nothing was paid.",
    },
  ],
});

export function createPayServer(options: PayServerOptions): { server: McpServer; payments: Payment[] } {
  const payments: Payment[] = [];
  const server = new McpServer({ name: "pay-with-approval", version: "1.0.0" });
  server.registerTool(
    "pay",
    {
      title: "Pay",
      description:
        "Pays an amount to a payee after the user approved it on their own device (they are asked by mail and in " +
        "their account; the call waits for their answer).",
      inputSchema: {
        amount: z.number().positive().max(1_000_000),
        currency: z.string().regex(/^[A-Z]{3}$/),
        payee: z.string().min(1).max(40),
      },
    },
    async ({ amount, currency, payee }) => {
      const approval = await askApproval(
        options.client,
        options.user,
        `Pay ${amount} ${currency} to ${payee}`,
        {
          expiresIn: options.expiresIn,
        },
      );
      if (!approval.approved) return refusal(approval);
      payments.push({ amount, currency, payee, approvedBy: approval.userId });
      return { content: [{ type: "text", text: `Paid ${amount} ${currency} to ${payee}.` }] };
    },
  );
  return { server, payments };
}
