// Tables of the webhooks capability (endpoints, deliveries, delivery attempts).
export {};
