// A small client on the types openapi-typescript generates from
// /openapi.json (api.d.ts, written by the test beside this file): it lists
// the tools and runs hash. The test only type-checks it (tsc --noEmit).
import type { paths } from "./api";

type ToolList = paths["/api/v1/tools"]["get"]["responses"][200]["content"]["application/json"];
type HashRun = paths["/api/v1/tools/hash/run"]["post"];
type HashRequest = HashRun["requestBody"]["content"]["application/json"];
type HashAnswer = HashRun["responses"][200]["content"]["application/json"];
type Refused = HashRun["responses"][422]["content"]["application/problem+json"];

export async function listTools(base: string): Promise<string[]> {
  const res = await fetch(base + "/api/v1/tools");
  const list = (await res.json()) as ToolList;
  return list.tools.map((t) => t.id);
}

export async function hash(base: string, text: string): Promise<string> {
  const body: HashRequest = { input: { operation: "digest", text, algorithm: "sha256", encoding: "hex" } };
  const res = await fetch(base + "/api/v1/tools/hash/run", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!res.ok) {
    const problem = (await res.json()) as Refused;
    throw new Error(problem.code + ": " + problem.title);
  }
  const answer = (await res.json()) as HashAnswer;
  if (answer.status !== "succeeded" || answer.output === undefined) {
    throw new Error("hash " + answer.status);
  }
  const digest: string = answer.output.digest;
  return digest;
}
