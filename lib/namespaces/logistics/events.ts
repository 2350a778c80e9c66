import { bookingSchema } from './schemas';


/** What logistics' changes announce: each event's data is the booking as its customer reads it at the event's instant. */
export const logisticsEventTypes = {
    'logistics.booking.created': { description: 'A booking was made: the booking as its customer reads it', data: bookingSchema },
    'logistics.booking.started': { description: 'A booking\'s pickup_at came on the data set\'s clock: the booking, active', data: bookingSchema },
    'logistics.booking.completed': { description: 'A booking\'s return_at came on the data set\'s clock: the booking, completed', data: bookingSchema },
    'logistics.booking.cancelled': { description: 'A booking was cancelled: the booking, cancelled', data: bookingSchema }
};
