import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { approvalClient } from "./approval";
import { createPayServer } from "./pay-server";

/** The example over stdio, as MCP hosts start local servers (README.md). */
const need = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required (see README.md)`);
  return value;
};

const client = await approvalClient({
  issuer: need("AUTH_ISSUER"),
  clientId: need("CIBA_CLIENT_ID"),
  clientSecret: need("CIBA_CLIENT_SECRET"),
});
const { server } = createPayServer({ client, user: need("PAY_USER") });
await server.connect(new StdioServerTransport());
