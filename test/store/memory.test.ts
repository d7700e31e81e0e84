import { memoryStore } from "../../src/store/memory.js";
import { CONTRACT_OPTIONS, describeStoreContract } from "./contract.js";

describeStoreContract("memoryStore", async () => {
  const store = memoryStore(CONTRACT_OPTIONS);
  return { store, cleanup: () => store.close() };
});
