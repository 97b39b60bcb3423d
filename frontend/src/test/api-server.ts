/** A real HTTP server on a free loopback port that answers with scripted replies and records requests. */
import { type IncomingHttpHeaders, createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface ScriptedReply {
  status: number;
  body?: unknown;
  contentType?: string;
}

export interface TestApiServer {
  origin: string;
  requests: RecordedRequest[];
  reply: (method: string, path: string, reply: ScriptedReply) => void;
  close: () => Promise<void>;
}

export async function startApiServer(): Promise<TestApiServer> {
  const replies = new Map<string, ScriptedReply>();
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const method = req.method ?? "GET";
      const url = req.url ?? "/";
      requests.push({ method, url, headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      const reply = replies.get(`${method} ${url.split("?")[0] ?? url}`) ?? {
        status: 404,
        body: { detail: `no scripted reply for ${method} ${url}` },
      };
      if (reply.body === undefined) {
        res.writeHead(reply.status).end();
        return;
      }
      const text = typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body);
      res.writeHead(reply.status, { "content-type": reply.contentType ?? "application/json" }).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    reply: (method, path, reply) => replies.set(`${method} ${path}`, reply),
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}
