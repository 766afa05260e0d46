// The page script's files are one function body (99-api.js): this is the
// parameter they share, for a type check of them as one program.
declare const nonce: string;
