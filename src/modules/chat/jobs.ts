import type { Job } from "../../jobs/scheduler.ts";
import { fanOutChatEvents, sendDueChatNotifications } from "./delivery.ts";

/**
 * `chat-notifications`, every two seconds: outbox events become notifications, then due ones are
 * posted to Slack (nothing is posted, and nothing made, without HERALD_SLACK_BOT_TOKEN).
 */
export function chatJobs(): Job[] {
  return [
    {
      id: "chat-notifications",
      pattern: "*/2 * * * * *",
      run: async (h, stopping) => {
        await fanOutChatEvents(h);
        await sendDueChatNotifications(h, stopping);
      },
    },
  ];
}
