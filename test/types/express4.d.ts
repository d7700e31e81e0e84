// Express 4 is installed as the alias `express4`; its API is typed by Express 5's types.
declare module "express4" {
  import express from "express";
  export default express;
}
