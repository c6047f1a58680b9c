"""Payments, commerce, CRM, support and market data."""

from __future__ import annotations

from . import Service, a, b, e, i, n, o, s, t

LIMIT = i("Maximum number of results to return.", minimum=1, maximum=100, default=10)
CURRENCY = s("Three-letter ISO currency code, lowercase, e.g. usd.", pattern="^[a-z]{3}$")
AMOUNT = i("Amount in the smallest currency unit, e.g. cents: 1999 means 19.99.", minimum=1)
CUSTOMER = s("Customer ID, starting with cus_.")

STRIPE = Service("stripe", "Stripe", ("payments", "billing", "money"), [
    t("create_customer", "Create a Stripe customer with an email, name and metadata.", {
        "email": s("Customer email.", format="email"),
        "name?": s("Full name or company name."),
        "metadata?": o("Key/value pairs stored on the customer."),
    }, "write", tags=("customer",)),
    t("get_customer", "Fetch a customer with their default payment method and balance.", {
        "customer_id": CUSTOMER,
    }),
    t("search_customers", "Search customers by email, name or metadata.", {
        "query": s("Stripe search query, e.g. email:'ana@example.com'."),
        "limit?": LIMIT,
    }, tags=("find", "customer")),
    t("create_payment_intent", "Create a payment intent to charge a customer a given amount.", {
        "amount": AMOUNT, "currency": CURRENCY,
        "customer_id?": CUSTOMER,
        "description?": s("Shown on the receipt and in the dashboard."),
        "confirm?": b("Confirm immediately with the customer's default payment method.", default=False),
    }, "write", tags=("charge", "payment"), zh=("创建付款", "为客户创建一笔扣款（支付意向）。")),
    t("create_refund", "Refund all or part of a payment.", {
        "payment_intent_id": s("Payment intent ID, starting with pi_."),
        "amount?": i("Amount to refund in the smallest unit; the full amount when omitted.", minimum=1),
        "reason?": e("Why the money is returned.", "duplicate", "fraudulent", "requested_by_customer"),
    }, "danger", tags=("refund", "money back")),
    t("list_charges", "List recent charges, optionally for one customer, with status and amount.", {
        "customer_id?": CUSTOMER,
        "created_after?": s("Only charges after this date-time.", format="date-time"),
        "limit?": LIMIT,
    }, tags=("payments", "transactions")),
    t("create_invoice", "Create a draft invoice for a customer from line items, to review and send.", {
        "customer_id": CUSTOMER,
        "items": a("Invoice lines.", {"type": "object", "properties": {
            "description": {"type": "string"}, "amount": {"type": "integer", "minimum": 1},
            "quantity": {"type": "integer", "minimum": 1}}, "required": ["description", "amount"]},
            minItems=1),
        "currency?": CURRENCY,
        "days_until_due?": i("Payment terms in days.", minimum=0, default=30),
    }, "write", tags=("billing", "invoice")),
    t("send_invoice", "Finalise a draft invoice and email it to the customer.", {
        "invoice_id": s("Invoice ID, starting with in_."),
    }, "write", tags=("billing", "invoice")),
    t("create_subscription", "Subscribe a customer to one or more recurring prices.", {
        "customer_id": CUSTOMER,
        "price_ids": a("Price IDs, starting with price_.", minItems=1),
        "trial_days?": i("Free trial length in days.", minimum=0),
    }, "write", tags=("recurring", "plan")),
    t("cancel_subscription", "Cancel a subscription now or at the end of the current period.", {
        "subscription_id": s("Subscription ID, starting with sub_."),
        "at_period_end?": b("Cancel when the paid period ends instead of now.", default=True),
    }, "delete", tags=("churn",)),
    t("get_balance", "Show the account's available and pending balance per currency.", tags=("payout", "funds")),
    t("create_payment_link", "Create a shareable checkout link for a price and quantity.", {
        "price_id": s("Price ID."),
        "quantity?": i("Quantity.", minimum=1, default=1),
    }, "write", tags=("checkout", "link")),
    t("list_disputes", "List open payment disputes (chargebacks) with their due dates.", {
        "status?": e("Dispute status.", "needs_response", "under_review", "won", "lost"),
    }, tags=("chargeback", "fraud")),
])

SHOPIFY = Service("shopify", "Shopify", ("ecommerce", "store", "orders", "shop"), [
    t("list_orders", "List store orders by status and date, with totals and fulfillment state.", {
        "status?": e("Order status.", "open", "closed", "cancelled", "any", default="open"),
        "created_after?": s("Only orders after this date-time.", format="date-time"),
        "limit?": LIMIT,
    }, tags=("sales",)),
    t("get_order", "Fetch one order with line items, customer, shipping address and payments.", {
        "order_id": s("Order ID or name such as #1042."),
    }),
    t("create_product", "Create a product with variants, price and inventory.", {
        "title": s("Product title."),
        "body_html?": s("Product description in HTML."),
        "vendor?": s("Brand or vendor."),
        "price": s("Price as a decimal string, e.g. 24.99.", pattern="^\\d+(\\.\\d{1,2})?$"),
        "sku?": s("Stock keeping unit."),
        "inventory?": i("Starting stock.", minimum=0),
    }, "write", tags=("catalog", "listing")),
    t("update_product", "Change a product's title, description, price or status.", {
        "product_id": s("Product ID."),
        "title?": s("New title."),
        "price?": s("New price as a decimal string."),
        "status?": e("Publication status.", "active", "draft", "archived"),
    }, "update", tags=("catalog",)),
    t("search_products", "Search products by title, vendor, type or tag.", {
        "query": s("Words to search for."),
        "limit?": LIMIT,
    }, tags=("catalog", "find")),
    t("adjust_inventory", "Add or remove stock of a variant at a location.", {
        "inventory_item_id": s("Inventory item ID."),
        "location_id": s("Location ID."),
        "delta": i("Units to add (positive) or remove (negative)."),
    }, "update", tags=("stock", "warehouse")),
    t("fulfill_order", "Mark an order's items as shipped with a tracking number; the customer is notified.", {
        "order_id": s("Order ID."),
        "tracking_number?": s("Carrier tracking number."),
        "carrier?": s("Carrier name, e.g. UPS."),
    }, "update", tags=("shipping", "shipment")),
    t("cancel_order", "Cancel an order and optionally refund and restock it.", {
        "order_id": s("Order ID."),
        "refund?": b("Refund the payment.", default=True),
        "restock?": b("Put the items back in stock.", default=True),
    }, "danger", tags=("refund",)),
    t("create_discount_code", "Create a discount code worth a percentage or fixed amount.", {
        "code": s("Code customers type at checkout, e.g. SPRING20."),
        "value_type": e("Kind of discount.", "percentage", "fixed_amount"),
        "value": n("Percent off or amount off.", exclusiveMinimum=0),
        "ends_at?": s("Expiry date-time.", format="date-time"),
    }, "write", tags=("coupon", "promotion")),
    t("get_customer", "Fetch a customer with order count, total spent and addresses.", {
        "customer_id": s("Customer ID or email."),
    }, tags=("customer",)),
    t("sales_report", "Summarise sales for a period: orders, revenue, average order value and top products.", {
        "start_date": s("First day, YYYY-MM-DD.", format="date"),
        "end_date": s("Last day, YYYY-MM-DD.", format="date"),
    }, tags=("analytics", "revenue"), zh=("销售报表", "汇总一段时间内的订单数、销售额和热销商品。")),
])

SALESFORCE = Service("salesforce", "Salesforce", ("crm", "sales", "leads", "accounts"), [
    t("soql_query", "Run a read-only SOQL query, e.g. SELECT Name, Amount FROM Opportunity WHERE StageName = 'Closed Won'.", {
        "query": s("SOQL SELECT statement."),
    }, tags=("sql", "report")),
    t("create_lead", "Create a lead with contact details, company and source.", {
        "last_name": s("Lead's last name."),
        "company": s("Company name."),
        "first_name?": s("First name."),
        "email?": s("Email.", format="email"),
        "phone?": s("Phone number."),
        "lead_source?": e("Where the lead came from.", "Web", "Referral", "Event", "Partner", "Cold Call"),
    }, "write", tags=("prospect",)),
    t("convert_lead", "Convert a qualified lead into an account, a contact and optionally an opportunity.", {
        "lead_id": s("Lead ID."),
        "create_opportunity?": b("Also create an opportunity.", default=True),
    }, "update", tags=("qualify",)),
    t("get_account", "Fetch an account with its contacts, open opportunities and owner.", {
        "account_id": s("Account ID or exact name."),
    }, tags=("company", "customer")),
    t("create_opportunity", "Create a sales opportunity on an account with amount, stage and close date.", {
        "account_id": s("Account ID."),
        "name": s("Opportunity name."),
        "stage": e("Sales stage.", "Prospecting", "Qualification", "Proposal", "Negotiation", "Closed Won", "Closed Lost"),
        "amount?": n("Expected amount.", minimum=0),
        "close_date": s("Expected close date, YYYY-MM-DD.", format="date"),
    }, "write", tags=("deal", "pipeline")),
    t("update_opportunity", "Move an opportunity to another stage or change its amount or close date.", {
        "opportunity_id": s("Opportunity ID."),
        "stage?": s("New stage name."),
        "amount?": n("New amount.", minimum=0),
        "close_date?": s("New close date.", format="date"),
    }, "update", tags=("deal", "pipeline")),
    t("log_activity", "Log a call, meeting or email against a contact, lead or opportunity.", {
        "related_id": s("ID of the record the activity is about."),
        "type": e("Activity type.", "Call", "Meeting", "Email"),
        "subject": s("Short subject."),
        "notes?": s("What was discussed."),
    }, "write", tags=("task", "history")),
    t("search_records", "Search accounts, contacts, leads and opportunities by text (SOSL).", {
        "text": s("Words to find."),
        "objects?": a("Object types to search, e.g. Account, Contact."),
    }, tags=("find",)),
    t("pipeline_summary", "Summarise the open pipeline by stage and owner for a quarter.", {
        "quarter?": s("Quarter as YYYY-Qn; the current one when omitted.", pattern="^\\d{4}-Q[1-4]$"),
    }, tags=("forecast", "report")),
    t("create_case", "Open a support case for an account or contact.", {
        "subject": s("Case subject."),
        "description?": s("Details."),
        "account_id?": s("Account ID."),
        "priority?": e("Priority.", "High", "Medium", "Low", default="Medium"),
    }, "write", tags=("support",)),
])

HUBSPOT = Service("hubspot", "HubSpot", ("crm", "marketing", "contacts", "deals"), [
    t("create_contact", "Create a HubSpot contact, or update it when the email already exists.", {
        "email": s("Email address.", format="email"),
        "firstname?": s("First name."),
        "lastname?": s("Last name."),
        "company?": s("Company name."),
        "lifecyclestage?": e("Lifecycle stage.", "subscriber", "lead", "marketingqualifiedlead", "salesqualifiedlead", "opportunity", "customer"),
    }, "update", tags=("lead", "person")),
    t("search_contacts", "Search contacts by name, email, company or any property.", {
        "query": s("Words to search for."),
        "limit?": LIMIT,
    }, tags=("find", "person")),
    t("get_contact", "Fetch a contact with its properties, associated company and deals.", {
        "contact_id": s("Contact ID or email."),
    }),
    t("create_deal", "Create a deal in a pipeline stage, associated with contacts and a company.", {
        "dealname": s("Deal name."),
        "amount?": n("Deal amount.", minimum=0),
        "dealstage": s("Pipeline stage ID, e.g. appointmentscheduled."),
        "contact_ids?": a("Contacts to associate."),
        "closedate?": s("Expected close date.", format="date"),
    }, "write", tags=("pipeline", "opportunity")),
    t("update_deal", "Move a deal to another stage or update its amount.", {
        "deal_id": s("Deal ID."),
        "dealstage?": s("New stage ID."),
        "amount?": n("New amount.", minimum=0),
    }, "update", tags=("pipeline",)),
    t("list_deals", "List deals in a pipeline, optionally in one stage.", {
        "pipeline?": s("Pipeline ID; the default pipeline when omitted."),
        "dealstage?": s("Stage ID."),
        "limit?": LIMIT,
    }, tags=("pipeline",)),
    t("create_note", "Attach a note to a contact, company or deal timeline.", {
        "object_type": e("Record type.", "contact", "company", "deal"),
        "object_id": s("Record ID."),
        "body": s("Note text."),
    }, "write", tags=("timeline",)),
    t("enroll_in_sequence", "Enroll a contact in a sales email sequence.", {
        "contact_id": s("Contact ID."),
        "sequence_id": s("Sequence ID."),
    }, "write", tags=("outreach", "automation")),
    t("get_form_submissions", "List recent submissions of a marketing form.", {
        "form_id": s("Form ID."),
        "limit?": LIMIT,
    }, tags=("forms", "leads")),
    t("list_campaigns", "List marketing email campaigns with send date, opens and clicks.", {
        "limit?": LIMIT,
    }, tags=("email marketing", "analytics")),
])

ZENDESK = Service("zendesk", "Zendesk", ("support", "helpdesk", "tickets", "customer service"), [
    t("create_ticket", "Open a support ticket on behalf of a customer.", {
        "subject": s("Ticket subject."),
        "description": s("First comment: the customer's problem."),
        "requester_email": s("Customer email.", format="email"),
        "priority?": e("Priority.", "low", "normal", "high", "urgent", default="normal"),
        "tags?": a("Ticket tags."),
    }, "write", tags=("ticket", "case")),
    t("get_ticket", "Fetch a ticket with its comments, requester and status.", {
        "ticket_id": i("Ticket number.", minimum=1),
    }),
    t("search_tickets", "Search tickets with Zendesk search syntax, e.g. 'status:open priority:urgent refund'.", {
        "query": s("Search query."),
        "limit?": LIMIT,
    }, tags=("find", "queue")),
    t("reply_to_ticket", "Add a public reply (emailed to the customer) or an internal note to a ticket.", {
        "ticket_id": i("Ticket number.", minimum=1),
        "body": s("Reply text."),
        "public?": b("Visible to the customer; false makes an internal note.", default=True),
    }, "write", tags=("respond", "answer customer")),
    t("update_ticket", "Change a ticket's status, priority, assignee or tags.", {
        "ticket_id": i("Ticket number.", minimum=1),
        "status?": e("New status.", "new", "open", "pending", "hold", "solved", "closed"),
        "priority?": e("New priority.", "low", "normal", "high", "urgent"),
        "assignee_email?": s("Agent to assign.", format="email"),
        "tags?": a("Replace the tags."),
    }, "update", tags=("triage", "assign")),
    t("merge_tickets", "Merge duplicate tickets into one target ticket.", {
        "target_id": i("Ticket that remains."),
        "source_ids": a("Tickets merged into it.", {"type": "integer"}, minItems=1),
    }, "danger", tags=("duplicate",)),
    t("search_help_center", "Search help center articles to find an answer for a customer.", {
        "query": s("Words to search for."),
        "locale?": s("Article locale, e.g. en-us.", default="en-us"),
    }, tags=("knowledge base", "faq", "docs"), zh=("搜索帮助中心", "在帮助中心文章中搜索答案。")),
    t("get_user", "Look up a customer or agent by email, with their organisation and recent tickets.", {
        "email": s("Email address.", format="email"),
    }, tags=("customer",)),
    t("list_macros", "List the saved reply macros agents can apply.", tags=("canned responses",)),
    t("satisfaction_ratings", "List recent customer satisfaction (CSAT) ratings with comments.", {
        "score?": e("Only this rating.", "good", "bad"),
        "limit?": LIMIT,
    }, tags=("csat", "feedback")),
])

FINANCE = Service("finance", "Market data", ("stocks", "markets", "investing", "crypto"), [
    t("get_stock_quote", "Get the latest price, change and volume of a stock or ETF by ticker symbol.", {
        "symbol": s("Ticker symbol, e.g. AAPL or VOO.", pattern="^[A-Z.^-]{1,10}$"),
    }, "net", tags=("price", "ticker", "share price"), zh=("股票报价", "按股票代码查询最新股价、涨跌幅和成交量。")),
    t("get_price_history", "Get daily open, high, low, close and volume for a ticker over a date range.", {
        "symbol": s("Ticker symbol."),
        "start_date": s("First day, YYYY-MM-DD.", format="date"),
        "end_date?": s("Last day; today when omitted.", format="date"),
        "interval?": e("Bar size.", "1d", "1wk", "1mo", default="1d"),
    }, "net", tags=("chart", "ohlc", "historical")),
    t("get_exchange_rate", "Get the current exchange rate between two currencies.", {
        "base": s("Currency to convert from, e.g. EUR.", pattern="^[A-Z]{3}$"),
        "quote": s("Currency to convert to, e.g. USD.", pattern="^[A-Z]{3}$"),
    }, "net", tags=("fx", "forex", "currency")),
    t("convert_currency", "Convert an amount between currencies at the latest rate.", {
        "amount": n("Amount to convert."),
        "from_currency": s("ISO code, e.g. GBP.", pattern="^[A-Z]{3}$"),
        "to_currency": s("ISO code, e.g. JPY.", pattern="^[A-Z]{3}$"),
    }, "net", tags=("fx", "money"), zh=("货币换算", "按最新汇率把金额从一种货币换算成另一种货币。")),
    t("get_crypto_price", "Get the price of a cryptocurrency in a fiat currency.", {
        "coin": s("Coin symbol, e.g. BTC or ETH."),
        "vs_currency?": s("Fiat currency.", default="USD"),
    }, "net", tags=("bitcoin", "crypto")),
    t("company_profile", "Get a company's sector, market cap, description and key ratios by ticker.", {
        "symbol": s("Ticker symbol."),
    }, "net", tags=("fundamentals", "pe ratio")),
    t("market_news", "Latest market headlines, optionally about one ticker.", {
        "symbol?": s("Ticker symbol."),
        "limit?": LIMIT,
    }, "net", tags=("headlines",)),
    t("earnings_calendar", "List upcoming earnings reports in a date range.", {
        "start_date": s("First day.", format="date"),
        "end_date": s("Last day.", format="date"),
    }, "net", tags=("earnings", "eps")),
])

SERVICES = [STRIPE, SHOPIFY, SALESFORCE, HUBSPOT, ZENDESK, FINANCE]
