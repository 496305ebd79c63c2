import { createApp } from "./app.js";
import { createPool } from "./db/pool.js";

const port = Number(process.env.PORT ?? 3000);
createApp(createPool()).listen(port, () => console.log(`StockFlow listening on http://localhost:${port}`));
