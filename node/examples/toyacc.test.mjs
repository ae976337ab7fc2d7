// Certifies toyacc with toolcert from node:test: one test per invariant.
import { fileURLToPath } from "node:url";

import { certifyTests } from "toolcert-adapter/test";

const adapter = fileURLToPath(new URL("./adapter.mjs", import.meta.url));
const flags = process.env.TOYACC_FLAGS ?? "";
certifyTests(`${process.execPath} ${adapter} ${flags}`, { cases: Number(process.env.CASES ?? 300), schema: false });
