// Counts the words and characters of the `text` parameter; parameters arrive as JSON on stdin.
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const { text } = JSON.parse(input);
  const words = text.split(/\s+/).filter((w) => w.length > 0);
  console.log(JSON.stringify({ words: words.length, characters: [...text].length }));
});
