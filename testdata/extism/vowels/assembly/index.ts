// A plain Extism plugin written in AssemblyScript with the Extism AS PDK:
// it knows nothing of Toolhost. It reads raw text and outputs
// {"count":N}, the number of the vowels a, e, i, o and u in it, either
// case. Its sidecar manifest (vowels.tool.json) declares it as the service
// "vowels" and maps the operation "count" to the export count_vowels,
// with the parameter "text" as the input.
import { Host } from "@extism/as-pdk";

function myAbort(message: string | null, fileName: string | null, lineNumber: u32, columnNumber: u32): void {}

export function count_vowels(): i32 {
  const s = Host.inputString();
  let count = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i) | 0x20;
    if (c == 0x61 || c == 0x65 || c == 0x69 || c == 0x6f || c == 0x75) count++;
  }
  Host.outputString('{"count":' + count.toString() + "}");
  return 0;
}
